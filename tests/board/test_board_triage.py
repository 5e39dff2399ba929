"""INBOX: informal notes (any text) and INBOX tickets become tickets by triage."""

from __future__ import annotations

from pathlib import Path

import pytest

from tether.board import Board, BoardError, State
from tether.core.errors import PathEscapeError

NOTE = "# Speed up the nightly build\n\nIt takes 40 minutes; the cache is never hit.\n"


def test_an_informal_note_is_listed_as_untriaged(board: Board) -> None:
    note = board.root / "INBOX" / "build.txt"
    note.write_text(NOTE, encoding="utf-8")
    inbox_ticket = board.add("already formatted")
    view = board.load()
    assert view.informal == (note,)
    assert view.untriaged() == sorted([note, inbox_ticket.path])
    assert view.tickets == (inbox_ticket,)


def test_triage_of_a_note_makes_a_ticket_with_the_note_as_body(board: Board) -> None:
    note = board.root / "INBOX" / "build.txt"
    note.write_text(NOTE, encoding="utf-8")
    ticket = board.triage(note, priority="P1")
    assert not note.exists()
    assert ticket.path == board.root / "ACTIONABLE" / f"{ticket.id}.md"
    assert ticket.title == "Speed up the nightly build"
    assert ticket.priority == "P1"
    assert ticket.body == NOTE
    assert board.load().untriaged() == []
    assert board.get(ticket.id) == ticket


def test_triage_with_a_title_into_a_state_that_needs_keys(board: Board) -> None:
    note = board.root / "INBOX" / "ask.md"
    note.write_text("we need the staging password\n", encoding="utf-8")
    with pytest.raises(BoardError, match="needs `needs`"):
        board.triage(note, state=State.USER, reason="data")
    assert note.read_text(encoding="utf-8") == "we need the staging password\n"
    ticket = board.triage(
        note,
        title="Staging password",
        state=State.USER,
        reason="data",
        front={"needs": "the staging password"},
    )
    assert (ticket.state, ticket.reason, ticket.needs) == (
        State.USER,
        "data",
        "the staging password",
    )


def test_triage_of_an_inbox_ticket_keeps_its_priority_unless_given(board: Board) -> None:
    ticket = board.add("formatted", priority="P1")
    triaged = board.triage(ticket.path)
    assert (triaged.state, triaged.priority, triaged.id) == (State.ACTIONABLE, "P1", ticket.id)
    other = board.add("other", priority="P1")
    assert board.triage(other.path, priority="P3", title="renamed").priority == "P3"
    assert board.get(other.id).title == "renamed"


def test_triage_refuses_to_stay_in_inbox_and_unknown_paths(board: Board, tmp_path: Path) -> None:
    note = board.root / "INBOX" / "n.txt"
    note.write_text("x\n", encoding="utf-8")
    with pytest.raises(BoardError, match="out of INBOX"):
        board.triage(note, state=State.INBOX)
    with pytest.raises(BoardError, match="is not a file in"):
        board.triage(board.root / "INBOX" / "missing.txt")
    outside = tmp_path / "outside.txt"
    outside.write_text("secret\n", encoding="utf-8")
    with pytest.raises(PathEscapeError):
        board.triage(outside)
    with pytest.raises(PathEscapeError):
        board.triage(Path("../../outside.txt"))
    link = board.root / "INBOX" / "link.txt"
    link.symlink_to(outside)
    with pytest.raises(PathEscapeError):
        board.triage(link)
    assert outside.read_text(encoding="utf-8") == "secret\n"


def test_an_interrupted_triage_leaves_one_inbox_ticket_that_triage_finishes(board: Board) -> None:
    # Step 1 of a triage done, step 2 (the rename) not: the note is a ticket under its old name.
    note = board.root / "INBOX" / "half.txt"
    note.write_text(
        "---\nid: T-20250601-000000123\ntitle: half\npriority: P2\n"
        "created: 2025-06-01T00:00:00Z\n---\n\nhalf done\n",
        encoding="utf-8",
    )
    view = board.load()
    assert view.malformed == () and [t.id for t in view.tickets] == ["T-20250601-000000123"]
    assert view.untriaged() == [note]
    assert board.get("T-20250601-000000123").path == note
    ticket = board.triage(note)
    assert ticket.path.name == "T-20250601-000000123.md" and not note.exists()


def test_empty_note_gets_its_file_name_as_title(board: Board) -> None:
    note = board.root / "INBOX" / "call-the-bank.txt"
    note.write_text("\n\n", encoding="utf-8")
    assert board.triage(note).title == "call-the-bank"
