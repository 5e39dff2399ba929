"""Loop tick speed: a cold and a warm decision against a bare read of every file it looks at.

For each size (default 1,000 / 10,000 / 50,000 tickets, with twice as many TODO
lines: 20,000 at 10,000 tickets) builds a project whose board has tickets in
every state folder (``bench/board.py``'s ``make_board``) and times, best of a
few repeats, in this one run:

- read baseline: list the state folders and read every ticket file and the
  TODO file (``cat``-like);
- cold tick: ``tick(loop, dry_run=True)`` with the parse caches emptied (every
  ticket file read and parsed, the TODO file parsed, every text matched against
  the autonomy policy), in-process;
- warm tick: the same again, nothing changed since (the board and TODO caches
  keyed by file modification times), in-process.

Two boards per size:

- ``as built``: INBOX holds notes, so the decision is "triage" (the intake gate);
- ``full walk``: INBOX and ACTIONABLE emptied, every BLOCKED check recently run
  (skipped within ``check_interval``), WAITING dates in the future, and the
  only open TODO item on the last line: the decision walks all of level 1.

Also a third line per size, ``guard``: nothing autonomous left and the guard
holding (level 1 walked, then the four sources located, none read), and a
fourth, ``cli``: ``tether loop tick --dry-run`` as a new process on the
``as built`` board (interpreter start, imports, config, a cold tick), wall time.

Prints milliseconds, µs per ticket (linear growth = a flat column), the ratio
cold / read (target <= 3x) and warm / read (the warm decision against the same
run's read of every file); the warm decision target is <= 30 ms at 10,000
tickets. Asserts nothing.

    .venv/bin/python bench/tick.py [--sizes 1000 10000 50000] [--repeats 3] [--dir DIR]
"""

from __future__ import annotations

import argparse
import gc
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository, for bench.*

from bench.board import cat_everything, make_board, read_everything

from tether.board import State
from tether.board import cache as board_cache
from tether.clock import FakeClock
from tether.loop import Loop, open_loop, tick, tick_memory, todo

CONFIG = """\
[profiles.bench]
harness = "scripted"
default = true
[loop]
board = "tickets"
todo_files = ["TODO.md"]
check_interval = "1d"
[loop.sources."decisions.ledger"]
path = "_control-center/_DECISIONS"
[loop.sources."user.model"]
path = "_control-center/_TOM-lm"
[loop.sources."memory.organic"]
kind = "files"
path = "memory/organic"
[loop.sources."memory.curated"]
kind = "files"
path = "memory/curated"
"""


def write_todo(path: Path, lines: int, *, open_last: bool) -> None:
    """``lines`` TODO lines: done items and items waiting for approval, one open item last."""
    rows = []
    for n in range(lines - 1):
        if n % 10 == 0:
            rows.append(f"## Section {n // 10}")
        elif n % 3 == 0:
            rows.append(f"- [ ] item {n} needs approval from the owner")
        else:
            rows.append(f"- [x] item {n} is done")
    rows.append("- [ ] the one open item" if open_last else "- [x] the last item")
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")


def make_project(root: Path, count: int) -> None:
    root.mkdir(parents=True)
    (root / "tether.toml").write_text(CONFIG, encoding="utf-8")
    for folder in (
        "_control-center/_DECISIONS",
        "_control-center/_TOM-lm",
        "memory/organic",
        "memory/curated",
    ):
        (root / folder).mkdir(parents=True)
    (root / "_control-center/_DECISIONS/DECIDED-AND-DONE.md").write_text("# Decided\n")
    make_board(root / "tickets", count)
    write_todo(root / "TODO.md", 2 * count, open_last=True)


def empty_level1(root: Path, loop: Loop) -> None:
    """INBOX and ACTIONABLE cleared, every BLOCKED check recorded as just run."""
    tickets = root / "tickets"
    for name in ("INBOX", "ACTIONABLE"):
        for path in (tickets / name).iterdir():
            if path.suffix == ".md" and path.name.startswith("T-"):
                path.rename(tickets / "DONE" / path.name)
            else:
                path.unlink()
    view = loop.board.load()
    now = loop.clock.now()
    for ticket in view.in_state(State.BLOCKED):
        tick_memory.record_check(loop.conn, loop.scope, ticket.id, now, False, 1)


def read_baseline(root: Path) -> int:
    """The strict baseline: one openat + read per file, nothing else."""
    return read_everything(root / "tickets") + len((root / "TODO.md").read_bytes())


def cat_baseline(root: Path) -> int:
    """The cat-like baseline: ``open(path).read()`` of every file."""
    return cat_everything(root / "tickets") + len((root / "TODO.md").read_bytes())


def clear_caches(loop: Loop) -> None:
    board_cache._CACHES.clear()
    loop.board._cache = board_cache.cache_for(loop.board.root)
    todo._cache.clear()
    loop.policy._memo.clear()  # cold: every text is matched against the policy again


def best_of(repeats: int, run: Callable[[], object], before: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(repeats):
        before()
        gc.collect()
        started = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - started)
    return best


def measure(loop: Loop, root: Path, repeats: int, expect: str) -> tuple[float, float, float, float]:
    def decide() -> None:
        result = tick(loop, dry_run=True)
        got = result.level1.work.source if result.level1.work else result.signal.value
        assert got == expect, (got, expect)

    read = best_of(repeats, lambda: read_baseline(root), lambda: None)
    cat = best_of(repeats, lambda: cat_baseline(root), lambda: None)
    cold = best_of(repeats, decide, lambda: clear_caches(loop))
    decide()
    warm = best_of(repeats * 5, decide, lambda: None)
    return read, cat, cold, warm


def cli_tick(root: Path, env: dict[str, str], repeats: int) -> float:
    tether = str(Path(sys.executable).parent / "tether")

    def run() -> None:
        done = subprocess.run(
            [tether, "loop", "tick", "--dry-run"],
            cwd=root,
            env=env,
            capture_output=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr

    return best_of(repeats, run, lambda: None)


def row(label: str, count: int, read: float, cat: float, cold: float, warm: float) -> str:
    per = 1e6 / count
    return (
        f"{count:>8} {label:<10} {read * 1e3:>8.1f} {cat * 1e3:>8.1f} {cold * 1e3:>8.1f} "
        f"{cold / read:>8.2f}x {cold / cat:>8.2f}x "
        f"{warm * 1e3:>8.2f} {warm / read:>8.3f}x "
        f"{read * per:>9.1f} {cold * per:>9.1f} {warm * per:>9.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 50000])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--dir", type=Path, help="Where to build the projects (default: temp).")
    args = parser.parse_args()
    print(
        f"{'tickets':>8} {'board':<10} {'read ms':>8} {'cat ms':>8} {'cold ms':>8} "
        f"{'cold/read':>9} {'cold/cat':>9} "
        f"{'warm ms':>8} {'warm/read':>9} {'read µs/t':>9} {'cold µs/t':>9} {'warm µs/t':>9}"
    )
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        for count in args.sizes:
            root = Path(tmp) / f"project-{count}"
            make_project(root, count)
            env = {**os.environ, "TETHER_HOME": str(root / ".tether")}
            clock = FakeClock(datetime(2026, 3, 2, 9, 0, tzinfo=UTC))
            loop = open_loop(root, env=env, clock=clock)
            try:
                read, cat, cold, warm = measure(loop, root, args.repeats, "intake")
                print(row("as built", count, read, cat, cold, warm), flush=True)
                cli = cli_tick(root, env, args.repeats)
                print(
                    f"{count:>8} {'cli':<10} {read * 1e3:>8.1f} {cat * 1e3:>8.1f} "
                    f"{cli * 1e3:>8.1f} {cli / read:>8.2f}x {cli / cat:>8.2f}x {'-':>8} {'-':>9} "
                    f"{read * 1e6 / count:>9.1f} {cli * 1e6 / count:>9.1f} {'-':>9}",
                    flush=True,
                )
                empty_level1(root, loop)
                print(
                    row("full walk", count, *measure(loop, root, args.repeats, "todo")), flush=True
                )
                write_todo(root / "TODO.md", 2 * count, open_last=False)
                tick(loop)  # the chain runs once; afterwards the guard holds
                # The board keeps USER tickets, so a guarded tick ends user-only (with
                # the bundle), never "exhausted": the sources are still not asked.
                print(
                    row("guard", count, *measure(loop, root, args.repeats, "user-only")),
                    flush=True,
                )
            finally:
                loop.close()
            shutil.rmtree(root)


if __name__ == "__main__":
    main()
