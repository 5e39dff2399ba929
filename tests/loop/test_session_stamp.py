"""The session stamp: every note the loop writes ends with the session stamp, never a guessed value.

The session is the explicit ``TETHER_SESSION_ID``, else the harness's own
variable (``CLAUDE_CODE_SESSION_ID``, ``CODEX_THREAD_ID``), else the loop's own
tick (``tick-YYYYMMDDTHHMMSS-xxxxxx``, kept in the tick's record).
A process started by the session (a subagent) inherits the variables, so it
stamps with its parent's session. Real ``tether`` subprocesses.
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from tests.loop.conftest import Project

from tether.board import State

TETHER = str(Path(sys.executable).parent / "tether")


def _run(project: Project, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [TETHER, *args],
        cwd=project.root,
        env={**project.env(), **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _stamp(session: str) -> str:
    return f"session: {session} | tether-loop@{socket.gethostname()} | "


@pytest.mark.slow
@pytest.mark.parametrize(
    ("env", "session"),
    [
        ({"CLAUDE_CODE_SESSION_ID": "cc-4711"}, "cc-4711"),
        ({"CODEX_THREAD_ID": "thr-42"}, "thr-42"),
        ({"TETHER_SESSION_ID": "explicit-1", "CLAUDE_CODE_SESSION_ID": "cc-4711"}, "explicit-1"),
    ],
    ids=["claude-code", "codex", "explicit-first"],
)
def test_a_done_ticket_ends_with_the_stamp_of_the_session(
    project: Project, env: dict[str, str], session: str
) -> None:
    ticket = project.add("Fix the typo", body="The word 'recieve'.\n")
    done = _run(project, "loop", "tick", **env)
    assert done.returncode == 0, done.stdout + done.stderr
    after = project.board.get(ticket.id)
    assert after.state is State.DONE
    last = after.path.read_text(encoding="utf-8").rstrip("\n").splitlines()[-1]
    assert last.strip().startswith(_stamp(session)), last


def test_outside_any_session_the_stamp_names_the_loop_own_tick(project: Project) -> None:
    ticket = project.add("Fix the typo", body="The word 'recieve'.\n")
    done = _run(project, "loop", "tick", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    tick_id = json.loads(done.stdout)["tick_id"]
    assert re.fullmatch(r"tick-\d{8}T\d{6}-[0-9a-f]{6}", tick_id), tick_id
    last = project.board.get(ticket.id).path.read_text(encoding="utf-8").rstrip().splitlines()[-1]
    assert last.strip().startswith(_stamp(tick_id)), last
    assert "unknown" not in last


@pytest.mark.slow
def test_every_note_and_hand_off_ends_with_the_stamp(project: Project) -> None:
    project.all_sources_ready(
        organic={"status": "found", "items": [{"id": "m1", "text": "Rotate the test keys"}]}
    )
    ticket = project.add("Port the parser", body="Move parse().\n", budget=3)
    for _ in range(3):  # three limit stops: notes on the ticket, then USER/decision
        assert _run(project, "loop", "tick", CLAUDE_CODE_SESSION_ID="cc-1").returncode == 0
    parked = project.board.get(ticket.id)
    assert parked.location == "USER/decision"
    lines = parked.path.read_text(encoding="utf-8").rstrip("\n").splitlines()
    assert lines[-1].strip().startswith(_stamp("cc-1"))
    notes = [n for n, line in enumerate(lines) if line.startswith("- 2")]
    assert len(notes) == 4
    for n in notes:  # each note's own last line is the stamp
        following = lines[n + 1 : next((m for m in notes if m > n), len(lines))]
        assert following and following[-1].strip().startswith(_stamp("cc-1")), following
    # a hand-off into INBOX (level 2 found work) ends with it too
    project.board.move(ticket.id, State.DONE)
    assert _run(project, "loop", "tick", CODEX_THREAD_ID="thr-9").returncode == 0
    (note,) = project.board.load().untriaged()
    assert note.read_text().rstrip("\n").splitlines()[-1].startswith(_stamp("thr-9"))


def test_a_subagent_stamps_with_its_parents_session(project: Project) -> None:
    ticket = project.add("Fix the typo")
    # the parent session's variables reach a process it starts (here through a shell)
    child = subprocess.run(
        ["/bin/sh", "-c", f"exec {TETHER} loop tick"],
        cwd=project.root,
        env={**project.env(), "CLAUDE_CODE_SESSION_ID": "parent-7"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert child.returncode == 0, child.stderr
    last = project.board.get(ticket.id).path.read_text().rstrip("\n").splitlines()[-1]
    assert last.strip().startswith(_stamp("parent-7"))


@pytest.mark.slow
@pytest.mark.parametrize(
    ("env", "session"),
    [
        ({"CLAUDE_CODE_SESSION_ID": "abc"}, "abc"),
        ({"TETHER_SESSION_ID": "explicit-2", "CLAUDE_CODE_SESSION_ID": "abc"}, "explicit-2"),
        ({}, "the tick"),
    ],
    ids=["claude-code", "explicit-first", "no-session"],
)
def test_a_ticked_todo_item_ends_with_the_stamp_under_it(
    project: Project, env: dict[str, str], session: str
) -> None:
    todo = project.root / "TODO.md"
    todo.write_text("# Next\n\n1. [ ] add a --version flag\n2. [ ] tidy the imports\n")
    done = _run(project, "loop", "tick", "--json", **env)
    assert done.returncode == 0, done.stdout + done.stderr
    if session == "the tick":
        session = json.loads(done.stdout)["tick_id"]
    lines = todo.read_text(encoding="utf-8").splitlines()
    assert lines[2].startswith("1. [x] add a --version flag — done in tether run r-"), lines
    # the item's own last line: a continuation line indented to the item's text
    assert lines[3].startswith("   " + _stamp(session)), lines
    assert lines[4] == "2. [ ] tidy the imports"


@pytest.mark.parametrize(
    ("env", "session"),
    [
        ({"CLAUDE_CODE_SESSION_ID": "abc"}, "abc"),
        ({"TETHER_SESSION_ID": "explicit-5", "CODEX_THREAD_ID": "thr-1"}, "explicit-5"),
        ({}, "unknown"),
    ],
    ids=["claude-code", "explicit-first", "unknown"],
)
def test_a_note_given_to_board_move_ends_with_the_stamp(
    project: Project, env: dict[str, str], session: str
) -> None:
    ticket = project.add("Ship the release notes")
    moved = _run(project, "board", "move", ticket.id, "DONE", "--note", "shipped by hand", **env)
    assert moved.returncode == 0, moved.stdout + moved.stderr
    lines = project.board.get(ticket.id).path.read_text().rstrip("\n").splitlines()
    assert lines[-2].endswith("shipped by hand")
    stamp = f"session: {session} | tether-board@{socket.gethostname()} | "
    assert lines[-1].strip().startswith(stamp), lines
