"""Crash safety and concurrency, with real processes: kill -9 mid-move, parallel adds."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from tests.board.conftest import tether

from tether.board import Board, State

MOVER = textwrap.dedent(
    """
    import itertools, sys
    from pathlib import Path
    from tether.board import Board, State
    board = Board(Path(sys.argv[1]))
    ids = sys.argv[2].split(",")
    places = [(State.ACTIONABLE, None, {}), (State.DONE, None, {}),
              (State.PARKED, "backlog", {}), (State.WAITING, "scheduled", {"until": "2030-01-01"}),
              (State.BLOCKED, "lock", {"blocked_by": "a lock", "check": ["true"]}),
              (State.INBOX, None, {})]
    done = 0
    for round_ in itertools.count():
        for n, ticket_id in enumerate(ids):
            state, reason, front = places[(round_ + n) % len(places)]
            board.move(ticket_id, state, reason, note=f"move {done}", front=front)
            done += 1
            print(done, flush=True)
    """
)


def _ticket_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.md") if not p.name.startswith("."))


def _wait_for_lines(process: subprocess.Popen[str], count: int, deadline: float) -> None:
    assert process.stdout is not None
    seen = 0
    while seen < count:
        line = process.stdout.readline()
        assert line, "the mover stopped early"
        seen = int(line)
        assert time.monotonic() < deadline, "the mover is too slow"


@pytest.mark.slow
def test_kill_9_in_the_middle_of_many_moves_leaves_every_ticket_exactly_once(
    tmp_path: Path,
) -> None:
    root = tmp_path / "tickets"
    board = Board(root)
    ids = [board.add(f"ticket {n}", state=State.ACTIONABLE, body="start\n").id for n in range(8)]
    rng = random.Random(5)
    total_kills = 12
    for _ in range(total_kills):
        process = subprocess.Popen(
            [sys.executable, "-c", MOVER, str(root), ",".join(ids)],
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            _wait_for_lines(process, rng.randint(3, 40), time.monotonic() + 60)
            os.kill(process.pid, signal.SIGKILL)
        finally:
            process.kill()
            process.wait(timeout=30)
            assert process.stdout is not None
            process.stdout.close()
        files = _ticket_files(root)
        assert sorted(p.stem for p in files) == sorted(ids), files
        view = Board(root).load()
        assert view.malformed == ()
        assert sorted(t.id for t in view.tickets) == sorted(ids)
        for ticket in view.tickets:
            assert ticket.body.startswith("start\n")
    # The moves really happened, and temp files (if a kill hit a write) are only dotfiles.
    assert sum(t.body.count("- ") for t in Board(root).load().tickets) > total_kills * 3
    assert all(p.name.startswith(".") for p in root.rglob("*.tmp"))


CRASH_BETWEEN_STEPS = textwrap.dedent(
    """
    import os, sys
    from pathlib import Path
    import tether.board.board as board_module
    from tether.board import Board, State
    board_module.rename_into = lambda source, target: os._exit(9)
    Board(Path(sys.argv[1])).move(sys.argv[2], State.DONE, note="finished")
    """
)


def test_a_crash_before_the_rename_out_of_waiting_leaves_a_well_formed_waiting_ticket(
    tmp_path: Path,
) -> None:
    board = Board(tmp_path / "tickets")
    ticket = board.add(
        "x", state=State.WAITING, reason="scheduled", front={"until": "2030-01-01"}, body="b\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", CRASH_BETWEEN_STEPS, str(board.root), ticket.id],
        check=False,
        timeout=60,
    )
    assert done.returncode == 9
    view = Board(board.root).load()
    assert view.malformed == ()
    (again,) = view.tickets
    assert again.state is State.WAITING and again.until is not None
    assert "finished" in again.body


def test_a_crash_between_rewrite_and_rename_leaves_the_updated_ticket_in_place(
    tmp_path: Path,
) -> None:
    board = Board(tmp_path / "tickets")
    ticket = board.add("x", state=State.ACTIONABLE, body="start\n")
    done = subprocess.run(
        [sys.executable, "-c", CRASH_BETWEEN_STEPS, str(board.root), ticket.id],
        check=False,
        timeout=60,
    )
    assert done.returncode == 9
    (only,) = _ticket_files(board.root)
    assert only == ticket.path
    again = board.get(ticket.id)
    assert again.state is State.ACTIONABLE and "finished" in again.body
    assert board.move(ticket.id, State.DONE).state is State.DONE


ADDER = textwrap.dedent(
    """
    import random, secrets, sys, time
    from pathlib import Path
    # Few possible ids, so that the processes collide and must resolve it.
    secrets.randbelow = lambda n: random.randrange(400)
    from tether.board import Board
    root, go, count = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
    deadline = time.monotonic() + 60
    while not go.exists() and time.monotonic() < deadline:
        time.sleep(0.001)
    board = Board(root)
    for n in range(count):
        print(board.add(f"from {sys.argv[4]} #{n}").id, flush=True)
    """
)


def test_concurrent_adds_from_several_processes_get_unique_ids(tmp_path: Path) -> None:
    root, go = tmp_path / "tickets", tmp_path / "go"
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", ADDER, str(root), str(go), "50", str(n)],
            stdout=subprocess.PIPE,
            text=True,
        )
        for n in range(4)
    ]
    go.touch()
    printed: list[str] = []
    for process in processes:
        out, _ = process.communicate(timeout=120)
        assert process.returncode == 0
        printed.extend(out.split())
    assert len(printed) == 200 and len(set(printed)) == 200
    files = _ticket_files(root)
    assert sorted(p.stem for p in files) == sorted(printed)
    view = Board(root).load()
    assert view.malformed == () and len(view.tickets) == 200


def test_concurrent_cli_adds_get_unique_ids(tmp_path: Path) -> None:
    env = {**os.environ, "NO_COLOR": "1"}
    processes = [
        subprocess.Popen(
            [str(Path(sys.executable).parent / "tether"), "board", "add", f"cli {n}", "--json"],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        for n in range(4)
    ]
    ids = []
    for process in processes:
        out, _ = process.communicate(timeout=120)
        assert process.returncode == 0
        ids.append(json.loads(out)["id"])
    assert len(set(ids)) == 4
    listed = tether("board", "list", "--json", cwd=tmp_path)
    assert sorted(t["id"] for t in json.loads(listed.stdout)["tickets"]) == sorted(ids)


def test_a_killed_writer_does_not_leave_the_board_locked(tmp_path: Path) -> None:
    board = Board(tmp_path / "tickets")
    board.ensure()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, fcntl, os; fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT);"
            "fcntl.flock(fd, fcntl.LOCK_EX); print('locked', flush=True); sys.stdin.read()",
            str(board.root / ".lock"),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
    holder.kill()
    holder.communicate(timeout=30)
    assert board.add("after the crash").title == "after the crash"
