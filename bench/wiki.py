"""The wiki index and the room brief on a generated 10,000-page wiki, against grep.

Generates a wiki with ``tests/wikigen.py`` (10,000 pages by default), then in
the same run:

- builds the index from scratch (pages/s; target >= 1,000) and times the
  freshness check with nothing changed, both ways: the walk a fresh process
  does (a ``stat`` per page) and the inotify watch a long-lived process keeps;
- for a set of questions, times ``room brief`` in-process on an up-to-date
  index, the same with the freshness check first (watch, and walk), and the
  ``tether room brief`` command (a fresh process: interpreter start, imports,
  the walk), and the baseline ``rg -l`` (or ``grep -rlE`` where rg is
  missing) for the question's terms over the same files, as a child process;
- prints the ratios to grep (target for the brief <= 0.5 once indexed);
- the costs the brief's vector models add: the first brief after the build
  (word vectors for every page), each question's first brief (column
  ``first``: the sentence model embeds the candidates it has not seen, up to
  32 pages), and in a fresh process the import and first call of each model
  and the sentence model's CPU time per page.

It never asserts a time.

    .venv/bin/python bench/wiki.py [--pages 10000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.wikigen import generate  # noqa: E402

from tether.room.brief import make_brief  # noqa: E402
from tether.wiki.index import Index, query_terms  # noqa: E402
from tether.wiki.layout import Wiki  # noqa: E402

TETHER = str(Path(sys.executable).parent / "tether")


def _median(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _median_cpu(fn: Callable[[], object], repeat: int, children: bool = False) -> float:
    """The median CPU time of ``fn`` (of its child processes with ``children``): on a
    machine others load, CPU time says what wall time cannot."""
    import resource

    who = resource.RUSAGE_CHILDREN if children else resource.RUSAGE_SELF
    times = []
    for _ in range(repeat):
        before = resource.getrusage(who)
        fn()
        after = resource.getrusage(who)
        times.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(times)


def _grep_argv(terms: list[str], folder: Path) -> list[str]:
    pattern = "|".join(terms)
    if shutil.which("rg"):
        return ["rg", "-l", "-i", "-e", pattern, str(folder)]
    return ["grep", "-rliE", pattern, str(folder)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    ns = parser.parse_args()
    print(_load("at the start"))
    with tempfile.TemporaryDirectory(prefix="tether-wiki-bench-") as tmp:
        base = Path(tmp)
        t0 = time.perf_counter()
        gen = generate(base / "kb", pages=ns.pages)
        size = sum(p.stat().st_size for p in (base / "kb" / "wiki").rglob("*.md"))
        print(
            f"generated {len(gen.pages)} pages ({size / 1e6:.1f} MB) in "
            f"{time.perf_counter() - t0:.1f} s"
        )
        wiki = Wiki.open(gen.root)
        home = base / "home"
        index = Index.open(wiki, home)
        t0, c0 = time.perf_counter(), time.process_time()
        stats = index.update()
        build, build_cpu = time.perf_counter() - t0, time.process_time() - c0
        rate = stats.parsed / build
        print(
            f"index build: {stats.parsed} pages in {build:.2f} s = {rate:,.0f} pages/s "
            f"(target >= 1,000: {'met' if rate >= 1000 else 'NOT met'}); "
            f"CPU {build_cpu:.2f} s = {stats.parsed / build_cpu:,.0f} pages per CPU second"
        )
        walked = _median(lambda: index.update(watch=False), ns.repeat)
        index.update()  # the first update with a watch walks once to set it up
        watched = _median(index.update, ns.repeat)
        print(
            f"freshness check, nothing changed: walk {walked * 1000:.1f} ms, "
            f"watch {watched * 1000:.2f} ms"
        )
        t0 = time.perf_counter()
        make_brief(index, "How is the wiki organised?", 12)
        print(
            f"first brief after the build (word vectors for every page, then the "
            f"sentence model for its candidates): {time.perf_counter() - t0:.2f} s"
        )
        ids = ["concept-00004", "concept-01234", "episode-00019", "hub", "concept-05555"]
        ids = [i for i in ids if i in gen.pages]
        questions = [f"What is {gen.word_of(i)} and what does it depend on?" for i in ids]
        questions.append("How do operators watch latency and errors during releases?")
        print(
            f"\n{'question':<44} {'first':>8} {'brief':>8} {'+watch':>8} {'+walk':>8} "
            f"{'cli':>8} {'grep':>8} {'b/g':>5} {'w/g':>5} {'k/g':>5} {'cli/g':>5}"
        )
        ratios: list[tuple[float, float, float, float]] = []
        cpu: list[tuple[float, float]] = []  # (brief, grep) CPU seconds
        cli_cpu: list[float] = []  # the command's CPU seconds (a fresh process)
        for question in questions:
            terms = query_terms(question)
            grep = _median(
                lambda t=terms: subprocess.run(  # type: ignore[misc]
                    _grep_argv(t, gen.root / "wiki"), capture_output=True, check=False
                ),
                ns.repeat,
            )
            t0 = time.perf_counter()
            make_brief(index, question, 12)
            first = time.perf_counter() - t0
            brief = _median(lambda q=question: make_brief(index, q, 12), ns.repeat)  # type: ignore[misc]
            cpu.append(
                (
                    _median_cpu(lambda q=question: make_brief(index, q, 12), ns.repeat),  # type: ignore[misc]
                    _median_cpu(
                        lambda t=terms: subprocess.run(  # type: ignore[misc]
                            _grep_argv(t, gen.root / "wiki"), capture_output=True, check=False
                        ),
                        ns.repeat,
                        children=True,
                    ),
                )
            )

            def with_watch(q: str = question) -> None:
                index.update()
                make_brief(index, q, 12)

            def with_walk(q: str = question) -> None:
                index.update(watch=False)
                make_brief(index, q, 12)

            # walks first: if one writes (renewed keys), the watch must walk once, not timed
            walking = _median(with_walk, ns.repeat)
            index.update()
            watching = _median(with_watch, ns.repeat)

            def command(q: str = question) -> None:
                subprocess.run(
                    [TETHER, "room", "brief", "--root", str(gen.root), q],
                    capture_output=True,
                    check=True,
                    env={"TETHER_HOME": str(home), "PATH": "/usr/bin:/bin"},
                )

            cli = _median(command, max(1, ns.repeat // 2))
            cli_cpu.append(_median_cpu(command, max(1, ns.repeat // 2), children=True))
            ratios.append((brief / grep, watching / grep, walking / grep, cli / grep))
            print(
                f"{question[:44]:<44} {first * 1000:6.1f}ms {brief * 1000:6.1f}ms "
                f"{watching * 1000:6.1f}ms "
                f"{walking * 1000:6.1f}ms {cli * 1000:6.1f}ms {grep * 1000:6.1f}ms "
                f"{brief / grep:5.2f} {watching / grep:5.2f} {walking / grep:5.2f} "
                f"{cli / grep:5.2f}"
            )
        index.close()
        worst = [max(r[i] for r in ratios) for i in range(4)]
        verdict = "met" if worst[1] <= 0.5 else "NOT met"
        print(
            f"\nbrief / grep, worst: index up to date {worst[0]:.2f}; with the freshness "
            f"check by the watch {worst[1]:.2f} (target <= 0.5: {verdict}); by the walk "
            f"{worst[2]:.2f}; as a command (interpreter start and walk included) {worst[3]:.2f}"
        )
        print(
            "CPU time, brief (index up to date) / grep, per question: "
            + ", ".join(f"{b * 1000:.0f}/{g * 1000:.0f} ms = {b / g:.2f}" for b, g in cpu)
        )
        print(
            "CPU time, the command (a fresh process: interpreter, imports, walk, models "
            "loaded, brief), per question: " + ", ".join(f"{c * 1000:.0f} ms" for c in cli_cpu)
        )
        print(
            f"baseline: {' '.join(_grep_argv(['TERMS'], Path('WIKI'))[:-2])} over the same "
            f"{len(gen.pages)} files"
        )
        _model_costs(gen.root)
    print(_load("at the end"))


def _load(when: str) -> str:
    """The machine's load average: wall times mean little on a busy machine."""
    import os

    one, five, fifteen = os.getloadavg()
    return f"load average {when}: {one:.2f} {five:.2f} {fifteen:.2f} ({os.cpu_count()} CPUs)"


# In a fresh process: the import and first call of a model, then (the sentence model)
# its CPU time per page over 64 pages of the wiki.
_MODEL_COST = """
import json, sys, time
from pathlib import Path
t0, c0 = time.perf_counter(), time.process_time()
from tether.wiki import {module} as model
model.embed(["How do operators watch latency and errors during releases?"])
first, first_cpu = time.perf_counter() - t0, time.process_time() - c0
texts = [p.read_text(encoding="utf-8")[:2000] for p in sorted(Path(sys.argv[1]).rglob("*.md"))[:64]]
c0 = time.process_time()
model.embed(texts)
print(json.dumps([first, first_cpu, (time.process_time() - c0) / len(texts)]))
"""


def _model_costs(root: Path) -> None:
    import json

    for label, module, note in (
        ("word vectors", "semantic", ""),
        ("sentence model", "sentence", " (it reads a page as up to 16 passages)"),
    ):
        done = subprocess.run(
            [sys.executable, "-c", _MODEL_COST.format(module=module), str(root / "wiki")],
            capture_output=True,
            text=True,
            check=True,
        )
        first, first_cpu, per_page = json.loads(done.stdout)
        print(
            f"{label}: import, load and first question {first * 1000:.0f} ms "
            f"({first_cpu * 1000:.0f} ms CPU) in a fresh process; "
            f"{per_page * 1000:.1f} ms CPU per text{note}"
        )


if __name__ == "__main__":
    main()
