"""Why the board reads its own front matter first: the fast reader against the YAML loader.

A cold tick reads every ticket's front matter. The board reads the lines it
writes itself with a small exact reader and hands anything else to PyYAML's C
loader (``tether.board.ticket_yaml``). This builds a board of N tickets and
times both over the same front matters, best of five each, in the same run.
Prints both times and the ratio; it never asserts a time.

Run: .venv/bin/python bench/frontmatter.py [--tickets 5000]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from tether.board import Board, State, ticket_yaml


def _best(work: Callable[[], object], repeats: int = 5) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tickets", type=int, default=5000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tether-bench-fm-") as name:
        board = Board(Path(name) / "tickets")
        board.ensure()
        for n in range(args.tickets):
            board.add(f"Ticket {n} with a title", state=State.ACTIONABLE, body="Some text.\n" * 5)
        fronts = []
        for path in sorted((Path(name) / "tickets").rglob("T-*.md")):
            parts = ticket_yaml.split(path.read_text(encoding="utf-8"))
            assert parts is not None
            fronts.append(parts[0])
    fast = _best(lambda: [ticket_yaml.parse(text) for text in fronts])
    loader = _best(lambda: [ticket_yaml.parse_yaml(text) for text in fronts])
    print(f"front matters of {len(fronts)} tickets, best of 5")
    print(f"  fast reader (as built)   {fast * 1000:8.1f} ms")
    print(f"  YAML C loader alone      {loader * 1000:8.1f} ms   (baseline, same run)")
    print(f"  loader / fast reader     {loader / fast:8.1f}x")


if __name__ == "__main__":
    main()
