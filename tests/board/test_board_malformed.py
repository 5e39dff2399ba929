"""Malformed files are reported with their path and what is wrong, and never touched."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.board.conftest import snapshot

from tether.board import Board, BoardError, State, TicketFormatError

GOOD = "id: {id}\ntitle: t\npriority: P2\ncreated: 2025-06-01T00:00:00Z\n"
ID = "T-20250601-000000009"

CASES = [
    # (relative path, content, expected message part)
    ("ACTIONABLE/" + ID + ".md", "---\nid: " + ID + "\ntitle: [oops\n---\n", "not valid YAML"),
    ("ACTIONABLE/" + ID + ".md", "---\ntitle: t\npriority: P2\n---\n", "missing `id`"),
    (
        "ACTIONABLE/" + ID + ".md",
        "---\n" + GOOD.format(id=ID).replace("P2", "P7") + "---\n",
        "unknown priority 'P7'",
    ),
    (
        "ACTIONABLE/" + ID + ".md",
        "---\n" + GOOD.format(id=ID).replace("title: t\n", "") + "---\n",
        "missing `title`",
    ),
    ("ACTIONABLE/" + ID + ".md", "---\nid: T-1\n---\n", "not of the form"),
    ("ACTIONABLE/" + ID + ".md", "---\n- a list\n---\n", "must be a YAML mapping"),
    ("ACTIONABLE/" + ID + ".md", "just text, no front matter\n", "no front matter"),
    (
        "ACTIONABLE/T-20250601-000000001.md",
        "---\n" + GOOD.format(id=ID) + "---\n",
        f"must be named {ID}.md",
    ),
    ("BLOCKED/" + ID + ".md", "---\n" + GOOD.format(id=ID) + "---\n", "not in a reason folder"),
    (
        "BLOCKED/someday/" + ID + ".md",
        "---\n" + GOOD.format(id=ID) + "---\n",
        "'someday' is not a reason of BLOCKED",
    ),
    ("BLOCKED/lock/" + ID + ".md", "---\n" + GOOD.format(id=ID) + "---\n", "needs `blocked_by`"),
    ("USER/data/" + ID + ".md", "---\n" + GOOD.format(id=ID) + "---\n", "needs `needs`"),
    ("WAITING/marker/" + ID + ".md", "---\n" + GOOD.format(id=ID) + "---\n", "needs `until`"),
    ("DOING/" + ID + ".md", "---\n" + GOOD.format(id=ID) + "---\n", "not in a state folder"),
    (ID + ".md", "---\n" + GOOD.format(id=ID) + "---\n", "not in a state folder"),
    ("DONE/old/" + ID + ".md", "---\n" + GOOD.format(id=ID) + "---\n", "in a sub-folder of DONE"),
    (
        "ACTIONABLE/" + ID + ".md",
        "---\n" + GOOD.format(id=ID).replace("2025-06-01T", "2025-13-01T") + "---\n",
        "month must be in 1..12",
    ),
    ("INBOX/note.md", "---\ntitle: [broken\n---\nhello\n", "not valid YAML"),
]


@pytest.mark.parametrize(("relative", "content", "message"), CASES)
def test_malformed_file_is_listed_and_left_byte_for_byte(
    board: Board, relative: str, content: str, message: str
) -> None:
    good = board.add("fine", state=State.ACTIONABLE)
    path = board.root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content, encoding="utf-8")
    before = snapshot(board.root)

    view = board.load()
    assert [p for p, _ in view.malformed] == [path]
    assert message in view.malformed[0][1]
    assert view.tickets == (board.get(good.id),)
    # Every way of touching it is refused; the board does not change.
    if ID in path.name and "DOING" not in relative and relative.count("/") <= 2:
        with pytest.raises(BoardError):
            board.move(ID, State.DONE)
        with pytest.raises(BoardError):
            board.update(ID, note="hello")
    board.move(good.id, State.DONE)
    board.move(good.id, State.ACTIONABLE)
    board.load()
    assert snapshot(board.root)[relative] == before[relative]
    assert path.read_text(encoding="utf-8") == content


def test_get_of_a_malformed_ticket_names_the_file_and_the_problem(board: Board) -> None:
    path = board.root / "ACTIONABLE" / f"{ID}.md"
    path.write_text("---\n" + GOOD.format(id=ID).replace("P2", "high") + "---\n", encoding="utf-8")
    with pytest.raises(TicketFormatError) as info:
        board.get(ID)
    assert info.value.path == path
    assert str(info.value) == f"{path}: unknown priority 'high'; use P1, P2 or P3."


def test_a_second_file_with_the_same_id_is_reported_not_used(board: Board) -> None:
    ticket = board.add("original", state=State.ACTIONABLE)
    copy = board.root / "INBOX" / "copy-of-ticket.md"
    copy.write_bytes(ticket.path.read_bytes())
    view = board.load()
    assert view.tickets == (board.get(ticket.id),) or [t.path for t in view.tickets] == [copy]
    ((_, message),) = view.malformed
    assert message.startswith(f"duplicate id {ticket.id}: also in ")


def test_triage_of_a_malformed_inbox_file_is_refused_and_it_stays(board: Board) -> None:
    note = board.root / "INBOX" / "broken.md"
    note.write_text("---\ntitle: [x\n---\n", encoding="utf-8")
    with pytest.raises(TicketFormatError, match="not valid YAML"):
        board.triage(note)
    assert note.read_text(encoding="utf-8") == "---\ntitle: [x\n---\n"


def test_non_utf8_ticket_is_malformed_but_an_inbox_note_is_informal(board: Board) -> None:
    (board.root / "DONE" / f"{ID}.md").write_bytes(b"---\nid: \xff\n---\n")
    (board.root / "INBOX" / "latin1.txt").write_bytes(b"caf\xe9\n")
    view = board.load()
    assert view.informal == (board.root / "INBOX" / "latin1.txt",)
    assert "not UTF-8" in view.malformed[0][1]
    with pytest.raises(BoardError, match="not UTF-8"):
        board.triage(board.root / "INBOX" / "latin1.txt")
    assert (board.root / "INBOX" / "latin1.txt").read_bytes() == b"caf\xe9\n"


def test_dotfiles_and_a_root_readme_are_ignored(board: Board) -> None:
    (board.root / "README.md").write_text("about this board\n", encoding="utf-8")
    (board.root / "ACTIONABLE" / ".T-x.md.abc.tmp").write_text("half", encoding="utf-8")
    (board.root / "DONE" / ".gitkeep").write_text("", encoding="utf-8")
    view = board.load()
    assert view.malformed == () and view.tickets == () and view.informal == ()


def test_malformed_files_stay_listed_on_warm_loads(board: Board) -> None:
    (board.root / "NOTES").mkdir()
    (board.root / "NOTES" / "x.md").write_text("x", encoding="utf-8")
    assert len(board.load().malformed) == 1
    assert len(board.load().malformed) == 1
    (board.root / "NOTES" / "x.md").unlink()
    assert board.load().malformed == ()


def test_a_misplaced_ticket_becomes_fine_when_moved_by_hand(board: Board, tmp_path: Path) -> None:
    wrong = board.root / "BLOCKED" / f"{ID}.md"
    wrong.write_text("---\n" + GOOD.format(id=ID) + "---\n", encoding="utf-8")
    assert board.load().malformed
    wrong.rename(board.root / "ACTIONABLE" / f"{ID}.md")
    view = board.load()
    assert view.malformed == () and [t.id for t in view.tickets] == [ID]
