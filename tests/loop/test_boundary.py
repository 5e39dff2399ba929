"""The board's boundary: INBOX at any depth, links out of the board, empty notes, parked triggers.

Real boards, real ``tether loop tick`` subprocesses: nothing on the board is
lost or moved silently.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.loop.conftest import Project

from tether.board import State

TETHER = str(Path(sys.executable).parent / "tether")


def test_a_note_deep_inside_inbox_forbids_every_stop(project: Project) -> None:
    project.all_sources_ready()
    nested = project.root / "tickets" / "INBOX" / "from-phone" / "2026" / "idea.md"
    nested.parent.mkdir(parents=True)
    nested.write_text("Look at the flaky upload test\n")
    done = project.tether("loop", "tick")
    assert done.returncode == 41, done.stdout + done.stderr
    assert "TETHER-LOOP:" not in done.stdout
    assert "from-phone/2026/idea.md" in done.stderr
    assert nested.read_text() == "Look at the flaky upload test\n"  # not moved, not lost


def test_an_empty_inbox_file_is_named_not_made_a_ticket(project: Project) -> None:
    project.all_sources_ready()
    empty = project.note("empty.md", "  \n\n")
    done = project.tether("loop", "tick")
    assert done.returncode == 41, done.stdout + done.stderr
    assert "empty.md: an empty file" in done.stderr
    assert empty.is_file()
    assert not project.board.load().tickets


def test_a_ticket_linking_out_of_the_board_is_refused_and_listed(
    project: Project, tmp_path: Path
) -> None:
    project.all_sources_ready()
    outside = tmp_path / "elsewhere.md"
    outside.write_text(
        "---\nid: T-20260302-000000007\ntitle: Delete nothing\npriority: P1\n"
        "created: 2026-03-02T08:00:00Z\n---\nDo it.\n"
    )
    before = outside.read_bytes()
    link = project.root / "tickets" / "ACTIONABLE" / "T-20260302-000000007.md"
    link.symlink_to(outside)
    done = project.tether("loop", "tick")
    assert done.returncode == 14, done.stdout + done.stderr  # user-only: the person must look
    assert f"a symbolic link to {outside}, outside the board" in done.stdout
    assert "fix tickets/ACTIONABLE/T-20260302-000000007.md" in done.stdout
    assert project.run_count() == 0
    assert outside.read_bytes() == before and link.is_symlink()
    moved = subprocess.run(
        [TETHER, "board", "move", "T-20260302-000000007", "DONE"],
        cwd=project.root,
        env=project.env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert moved.returncode != 0 and len(moved.stderr.strip().splitlines()) == 1
    assert outside.read_bytes() == before and link.is_symlink()


def test_a_parked_ticket_whose_trigger_fired_is_surfaced_not_worked(project: Project) -> None:
    project.all_sources_ready()
    ticket = project.add(
        "Revisit the cache idea", State.PARKED, "until-trigger", until="2026-03-01"
    )
    later = project.add("Someday", State.PARKED, "until-trigger", until="2030-01-01")
    done = project.tether("loop", "tick")
    assert done.returncode == 14, done.stdout  # user-only, never exhausted
    assert f'PARKED/until-trigger {ticket.id} (P2) "Revisit the cache idea": its trigger fired' in (
        done.stdout
    )
    assert later.id not in done.stdout
    assert project.location(ticket.id) == "PARKED/until-trigger"
    assert project.run_count() == 0
