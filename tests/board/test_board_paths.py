"""Ticket ids, states and reasons from user input cannot reach outside the board root."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.board.conftest import snapshot

from tether.board import Board, BoardError, State, parse_state
from tether.core.errors import PathEscapeError


@pytest.mark.parametrize(
    "bad_id",
    [
        "../../etc/passwd",
        "T-20250601-000000001/../../x",
        "/etc/passwd",
        "T-20250601-00000001",
        "T-20250601-000000001.md",
        "",
        "T-20250601-000000001\n",
    ],
)
def test_ids_that_are_not_ticket_ids_are_refused(board: Board, bad_id: str) -> None:
    with pytest.raises(BoardError, match="is not a ticket id"):
        board.get(bad_id)
    with pytest.raises(BoardError, match="is not a ticket id"):
        board.move(bad_id, State.DONE)
    with pytest.raises(BoardError, match="is not a ticket id"):
        board.update(bad_id, note="x")


@pytest.mark.parametrize(
    "text", ["BLOCKED/../../../tmp", "PARKED/..", "../INBOX", "DONE/../../x", "USER/data/../../.."]
)
def test_state_text_with_path_parts_is_refused(text: str) -> None:
    with pytest.raises(BoardError):
        parse_state(text)


def test_reasons_given_to_the_library_are_checked(board: Board) -> None:
    ticket = board.add("x")
    for reason in ("../../../escape", "lock/../../..", "/tmp"):
        with pytest.raises(BoardError, match="unknown reason"):
            board.move(ticket.id, State.BLOCKED, reason)
    assert board.get(ticket.id).state is State.INBOX


def test_a_state_folder_linked_outside_the_board_is_refused_and_not_read(
    tmp_path: Path,
) -> None:
    root = tmp_path / "tickets"
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "T-20250601-000000001.md").write_text(
        "---\nid: T-20250601-000000001\ntitle: t\npriority: P2\ncreated: 2025-06-01\n---\n",
        encoding="utf-8",
    )
    board = Board(root)
    board.ensure()
    (root / "DONE").rmdir()
    (root / "DONE").symlink_to(outside)
    fresh = Board(root)
    view = fresh.load()
    assert view.tickets == ()
    ((path, message),) = view.malformed
    assert path == root / "DONE" and "resolves outside" in message
    ticket = fresh.add("x", state=State.ACTIONABLE)
    with pytest.raises(PathEscapeError):
        fresh.move(ticket.id, State.DONE)
    with pytest.raises(BoardError, match="no ticket"):  # it is outside: never read
        fresh.get("T-20250601-000000001")
    assert sorted(p.name for p in outside.iterdir()) == ["T-20250601-000000001.md"]


def test_cli_refuses_escapes_with_exit_2_and_changes_nothing(tmp_path: Path) -> None:
    from tests.board.conftest import tether

    assert tether("board", "add", "x", cwd=tmp_path).returncode == 0
    before = snapshot(tmp_path / "tickets")
    for args in (
        ["board", "show", "../../etc/passwd"],
        ["board", "move", "../x", "DONE"],
        ["board", "add", "y", "--state", "BLOCKED/../../../tmp"],
        ["board", "triage", "/etc/hostname"],
    ):
        done = tether(*args, cwd=tmp_path)
        assert done.returncode == 2, (args, done.stderr)
        assert done.stderr.startswith("tether: error: "), done.stderr
    assert snapshot(tmp_path / "tickets") == before
