"""Board load speed: cold parse and warm (cached) load against a bare read of every file.

For each size (default 1,000 / 10,000 / 50,000 tickets) builds a board with
tickets spread over every state folder and reason (plus informal INBOX notes,
one per 200 tickets), then times, best of a few repeats, in this one run:

- read baseline: list every state folder and read every file's bytes, the
  cheapest way (``openat`` + one ``read`` of the known size), as the loader does;
- cat baseline: the same with ``open(path, "rb").read()`` (what ``cat`` costs);
- cold load: ``Board.load()`` with an empty cache (every file read and parsed);
- cold load, C loader only: the same with the fast front-matter reader switched
  off, so every block goes through ``yaml.CSafeLoader`` (for comparison);
- warm load (watch): ``Board.load()`` again, nothing changed, with the Linux
  folder watch (inotify): no stat per file;
- warm load (stat): the same with the watch off: one ``stat`` per file, no parsing;
- one edit (stat): one ticket appended to, then ``Board.load()`` (one re-parse).

Prints wall-clock and CPU times, µs per ticket (linear growth = a flat column)
and the ratio of cold load to each baseline in CPU time (target <= 3x; CPU time
because the machine may be shared); the warm load must stay well under the
loop's 30 ms decision budget at 10,000 tickets. Asserts nothing.

    .venv/bin/python bench/board.py [--sizes 1000 10000 50000] [--repeats 3] [--dir DIR]

``make_board`` is importable for other benchmarks (bench/tick.py).
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

from tether.board import Board, State, ticket_yaml
from tether.board import cache as board_cache
from tether.board.states import all_folders

_TEXT = (
    "fix the login redirect after session expiry cache build artefacts speed up nightly "
    "pipeline review draft release notes migrate database schema retry flaky test parser "
    "handle empty input document the config keys add a metric for queue depth"
)
WORDS = _TEXT.split()


def _body(rng: random.Random) -> str:
    lines = [" ".join(rng.choices(WORDS, k=12)) for _ in range(rng.randint(3, 9))]
    return "## What\n\n" + "\n".join(lines) + "\n\n## Done when\n\n- [ ] tests pass\n"


def _state_front(state: State, reason: str | None, rng: random.Random) -> dict[str, Any]:
    if state is State.BLOCKED:
        return {"blocked_by": "waiting for the deploy lock", "check": ["test", "!", "-e", "x.lock"]}
    if state is State.WAITING:
        if reason == "marker":
            return {"marker": "build/ready.flag"}
        return {"until": date(2030, 1, 1) + timedelta(days=rng.randint(0, 300))}
    if state is State.USER:
        return {"needs": "a decision on the licence"}
    return {}


def make_board(root: Path, count: int, *, seed: int = 7, informal_every: int = 200) -> None:
    """Write ``count`` tickets over every folder (weighted like a long-lived board)."""
    rng = random.Random(seed)
    leaves = all_folders()
    weights = [
        {State.DONE: 40, State.ACTIONABLE: 20, State.INBOX: 3}.get(state, 2) for state, _ in leaves
    ]
    for state, reason in leaves:
        (root / state.value / (reason or "")).mkdir(parents=True, exist_ok=True)
    start = datetime(2025, 1, 1, tzinfo=UTC)
    for n in range(count):
        state, reason = rng.choices(leaves, weights)[0]
        created = start + timedelta(minutes=7 * n)
        ticket_id = f"T-{created:%Y%m%d}-{n:09d}"
        front: dict[str, Any] = {
            "id": ticket_id,
            "title": " ".join(rng.choices(WORDS, k=rng.randint(3, 8))).capitalize(),
            "priority": rng.choice(("P1", "P2", "P2", "P3")),
            "created": created,
            **_state_front(state, reason, rng),
        }
        if rng.random() < 0.3:
            front["runs"] = [f"r-{n}-{k}" for k in range(rng.randint(1, 3))]
            front["last_run"] = front["runs"][-1]
        text = ticket_yaml.join(ticket_yaml.dump(front), _body(rng))
        (root / state.value / (reason or "") / f"{ticket_id}.md").write_text(text, "utf-8")
        if informal_every and n % informal_every == 0:
            (root / "INBOX" / f"note-{n}.txt").write_text(
                "Remember to " + " ".join(rng.choices(WORDS, k=10)) + "\n", "utf-8"
            )


def read_everything(root: Path) -> int:
    """The baseline: list the state folders and read every file, nothing else.

    Each file is read the cheapest way Python has, the way the loader reads it
    (``openat``/``fstatat`` through the folder's descriptor, one ``read`` of the
    file's size), so the ratio charges parsing and checking only.
    """
    total = 0
    for state, reason in all_folders():
        folder = f"{root}/{state.value}/{reason}" if reason else f"{root}/{state.value}"
        dir_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            with os.scandir(dir_fd) as entries:
                for entry in entries:
                    size = entry.stat().st_size
                    fd = os.open(entry.name, os.O_RDONLY | os.O_CLOEXEC, dir_fd=dir_fd)
                    try:
                        total += len(os.read(fd, size + 1))
                    finally:
                        os.close(fd)
        finally:
            os.close(dir_fd)
    return total


def forget() -> None:
    """Drop the process-wide parse cache (outside the timed region: freeing costs too)."""
    board_cache._CACHES.clear()
    gc.collect()


def cat_everything(root: Path) -> int:
    """A ``cat``-like baseline: ``open(path, "rb").read()`` of every listed file."""
    total = 0
    for state, reason in all_folders():
        folder = f"{root}/{state.value}/{reason}" if reason else f"{root}/{state.value}"
        with os.scandir(folder) as entries:
            for entry in entries:
                with open(entry.path, "rb") as handle:
                    total += len(handle.read())
    return total


def cold_load(root: Path) -> int:
    """A load with an empty cache: every file is read and parsed."""
    return len(Board(root).load().tickets)


def best_of(
    repeats: int, run: Callable[[], object], before: Callable[[], object] = lambda: 0
) -> tuple[float, float]:
    """Shortest (wall, CPU) seconds over ``repeats`` runs; CPU = this process's own time."""
    wall = cpu = float("inf")
    for _ in range(repeats):
        before()
        gc.collect()
        started, started_cpu = time.perf_counter(), time.process_time()
        run()
        cpu = min(cpu, time.process_time() - started_cpu)
        wall = min(wall, time.perf_counter() - started)
    return wall, cpu


def _touch_one(root: Path) -> Callable[[], object]:
    target = next((root / "ACTIONABLE").glob("T-*.md"))
    state = {"n": 0}

    def edit() -> None:
        state["n"] += 1
        with target.open("a", encoding="utf-8") as handle:
            handle.write(f"- edit {state['n']}\n")

    return edit


def measure(root: Path, count: int, repeats: int) -> dict[str, tuple[float, float]]:
    board = Board(root)
    result = {
        "read": best_of(repeats, lambda: read_everything(root)),
        "cat": best_of(repeats, lambda: cat_everything(root)),
        "cold": best_of(repeats, lambda: cold_load(root), before=forget),
    }
    fast = ticket_yaml._fast
    ticket_yaml._fast = _never  # type: ignore[assignment]
    try:
        result["cold_yaml"] = best_of(repeats, lambda: cold_load(root), before=forget)
    finally:
        ticket_yaml._fast = fast
    for watch in (True, False):
        board_cache.USE_INOTIFY = watch
        board_cache._CACHES.clear()
        board = Board(root)
        view = board.load()
        assert len(view.tickets) == count and not view.malformed, view.malformed[:3]
        name = "watch" if watch else "walk"
        result[f"warm_{name}"] = best_of(repeats * 3, board.load)
        result[f"edit_{name}"] = best_of(repeats * 3, board.load, before=_touch_one(root))
    board_cache.USE_INOTIFY = True
    return result


def _both(m: dict[str, tuple[float, float]], key: str, digits: int = 1) -> str:
    wall, cpu = m[key]
    return f"{wall * 1e3:.{digits}f} ({cpu * 1e3:.{digits}f})"


def _never(_text: str) -> dict[str, Any]:
    raise ticket_yaml._UnsupportedError


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 50000])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--dir", type=Path, help="Where to build the boards (default: a temp dir).")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        print("times in ms, best of the repeats, wall-clock (CPU of this process in brackets);")
        print("cold/read is the CPU ratio (the machine may be shared); per-ticket columns in µs")
        print(
            f"{'tickets':>8} {'read':>15} {'cat':>15} {'cold':>15} {'cold/read':>9} "
            f"{'cold/cat':>8} {'C loader only':>15} "
            f"{'warm (watch)':>13} {'warm (stat)':>13} {'1 edit (stat)':>15} "
            f"{'read/t':>7} {'cold/t':>7} {'stat/t':>7}"
        )
        for count in args.sizes:
            root = Path(tmp) / f"board-{count}" / "tickets"
            make_board(root, count)
            # Small boards are quick: more repeats there steady the best-of.
            m = measure(root, count, max(args.repeats, min(20, 20000 // count)))

            both = partial(_both, m)
            per = 1e6 / count
            print(
                f"{count:>8} {both('read'):>15} {both('cat'):>15} {both('cold'):>15} "
                f"{m['cold'][1] / m['read'][1]:>8.2f}x {m['cold'][1] / m['cat'][1]:>7.2f}x "
                f"{both('cold_yaml'):>15} "
                f"{both('warm_watch', 2):>13} {both('warm_walk'):>13} {both('edit_walk'):>15} "
                f"{m['read'][1] * per:>7.1f} {m['cold'][1] * per:>7.1f} "
                f"{m['warm_walk'][1] * per:>7.2f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
