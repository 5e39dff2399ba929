"""The wiki index and the room brief on a generated 10,000-page wiki, against grep.

Generates a wiki with ``tests/wikigen.py`` (10,000 pages by default), then in
the same run:

- builds the index from scratch (pages/s; target >= 1,000) and updates it once
  with nothing changed (the cost every brief pays to stay fresh);
- for a set of questions, times ``room brief`` in-process (an up-to-date index,
  with the freshness walk) and as the ``tether room brief`` command, and the
  baseline ``rg -l`` (or ``grep -rlE`` where rg is missing) for the question's
  terms over the same files, as a child process;
- prints the ratios brief/grep (target <= 0.5 once indexed).

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
sys.path.insert(0, str(ROOT / "tests"))

from tether.room.brief import make_brief  # noqa: E402
from tether.wiki.index import Index, query_terms  # noqa: E402
from tether.wiki.layout import Wiki  # noqa: E402
from wikigen import generate  # noqa: E402

TETHER = str(Path(sys.executable).parent / "tether")


def _median(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
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
        t0 = time.perf_counter()
        stats = index.update()
        build = time.perf_counter() - t0
        rate = stats.parsed / build
        print(
            f"index build: {stats.parsed} pages in {build:.2f} s = {rate:,.0f} pages/s "
            f"(target >= 1,000: {'met' if rate >= 1000 else 'NOT met'})"
        )
        fresh = _median(index.update, ns.repeat)
        print(f"index update, nothing changed: {fresh * 1000:.1f} ms")
        ids = ["concept-00004", "concept-01234", "episode-00019", "hub", "concept-05555"]
        ids = [i for i in ids if i in gen.pages]
        questions = [f"What is {gen.word_of(i)} and what does it depend on?" for i in ids]
        questions.append("How do operators watch latency and errors during releases?")
        print(
            f"\n{'question':<58} {'brief':>9} {'+fresh':>9} {'cli':>9} {'grep':>9} "
            f"{'b/g':>6} {'f/g':>6} {'cli/g':>6}"
        )
        ratios: list[tuple[float, float, float]] = []
        for question in questions:
            terms = query_terms(question)
            grep = _median(
                lambda t=terms: subprocess.run(  # type: ignore[misc]
                    _grep_argv(t, gen.root / "wiki"), capture_output=True, check=False
                ),
                ns.repeat,
            )
            brief = _median(lambda q=question: make_brief(index, q, 12), ns.repeat)  # type: ignore[misc]

            def with_refresh(q: str = question) -> None:
                index.update()
                make_brief(index, q, 12)

            refreshed = _median(with_refresh, ns.repeat)
            cli = _median(
                lambda q=question: subprocess.run(  # type: ignore[misc]
                    [TETHER, "room", "brief", "--root", str(gen.root), q],
                    capture_output=True,
                    check=True,
                    env={"TETHER_HOME": str(home), "PATH": "/usr/bin:/bin"},
                ),
                max(1, ns.repeat // 2),
            )
            ratios.append((brief / grep, refreshed / grep, cli / grep))
            print(
                f"{question[:58]:<58} {brief * 1000:7.1f}ms {refreshed * 1000:7.1f}ms "
                f"{cli * 1000:7.1f}ms {grep * 1000:7.1f}ms {brief / grep:6.2f} "
                f"{refreshed / grep:6.2f} {cli / grep:6.2f}"
            )
        index.close()
        worst = max(r[0] for r in ratios)
        worst_fresh = max(r[1] for r in ratios)
        print(
            f"\nbrief / grep, index up to date: worst {worst:.2f} (target <= 0.5: "
            f"{'met' if worst <= 0.5 else 'NOT met'}); with the freshness walk: worst "
            f"{worst_fresh:.2f}; as a command (interpreter start included): worst "
            f"{max(r[2] for r in ratios):.2f}"
        )
        print(
            f"baseline: {' '.join(_grep_argv(['TERMS'], Path('WIKI'))[:-2])} over the same "
            f"{len(gen.pages)} files"
        )


if __name__ == "__main__":
    main()
