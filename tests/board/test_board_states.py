"""Every state and reason: add, read back, move through, and the keys each state needs."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest
from tests.board.conftest import snapshot

from tether.board import REASONS, Board, BoardError, NewTicket, State, TicketFormatError
from tether.board.states import all_folders
from tether.clock import FakeClock

NEEDS: dict[State, dict[str, Any]] = {
    State.BLOCKED: {"blocked_by": "the deploy lock", "check": ["test", "!", "-e", "deploy.lock"]},
    State.WAITING: {"until": date(2025, 7, 1)},
    State.USER: {"needs": "the API key for staging"},
}
LEAVES = all_folders()


def test_there_are_nineteen_leaf_folders_as_in_the_spec() -> None:
    assert len(LEAVES) == 19
    assert REASONS[State.BLOCKED] == (
        "host-receipt",
        "foreign-state",
        "lock",
        "quota",
        "dependency",
    )
    assert REASONS[State.PARKED] == ("skip", "backlog", "until-trigger")


def test_ensure_creates_every_folder(board: Board) -> None:
    for state, reason in LEAVES:
        folder = board.root / state.value / (reason or "")
        assert folder.is_dir(), folder


@pytest.mark.parametrize(("state", "reason"), LEAVES, ids=lambda v: str(v))
def test_add_and_read_back_in_every_folder(board: Board, state: State, reason: str | None) -> None:
    front = NEEDS.get(state, {})
    added = board.add(
        "Title: with colon", priority="P1", body="Body\n", state=state, reason=reason, front=front
    )
    assert added.path == board.root / state.value / (reason or "") / f"{added.id}.md"
    assert added.path.is_file()
    again = board.get(added.id)
    assert again == added
    view = board.load()
    assert view.tickets == (added,)
    assert view.in_state(state, reason) == [added]
    assert view.in_state(state) == [added]
    assert again.title == "Title: with colon"
    assert again.priority == "P1"
    assert again.created == datetime(2025, 6, 1, 9, 30, tzinfo=UTC)
    assert again.body == "Body\n"
    assert (again.state, again.reason) == (state, reason)
    for key, value in front.items():
        assert getattr(again, key) == value


def test_a_ticket_travels_through_every_folder_and_comes_back(
    board: Board, clock: FakeClock
) -> None:
    ticket = board.add("Traveller", body="Start.\n")
    for state, reason in [*LEAVES, (State.INBOX, None)]:
        clock.advance(60)
        ticket = board.move(
            ticket.id, state, reason, note=f"to {state.value}", front=NEEDS.get(state)
        )
        assert board.get(ticket.id) == ticket
        files = [p for p in board.root.rglob("*.md")]
        assert files == [ticket.path], files
    assert ticket.body.startswith("Start.\n\n- 2025-06-01")
    assert ticket.body.count("\n- ") == 20
    assert ticket.blocked_by is None and ticket.check is None and ticket.needs is None


def test_keys_of_the_old_state_are_dropped_on_a_move(board: Board) -> None:
    ticket = board.add("x", state=State.BLOCKED, reason="lock", front=NEEDS[State.BLOCKED])
    moved = board.move(ticket.id, State.ACTIONABLE)
    assert "blocked_by" not in moved.front and "check" not in moved.front
    assert "blocked_by" not in moved.path.read_text()


def test_a_check_may_name_a_ticket_that_must_be_done(board: Board) -> None:
    first = board.add("first", state=State.ACTIONABLE)
    second = board.add(
        "second",
        state=State.BLOCKED,
        reason="dependency",
        front={"blocked_by": "first", "check": first.id},
    )
    assert second.check == first.id and second.check_is_ticket


@pytest.mark.parametrize(
    ("state", "reason", "front", "message"),
    [
        (State.BLOCKED, "lock", {"check": ["true"]}, "needs `blocked_by`"),
        (State.BLOCKED, "lock", {"blocked_by": "x"}, "needs `check`"),
        (State.BLOCKED, "lock", {"blocked_by": "x", "check": "make test"}, "neither a ticket id"),
        (State.BLOCKED, "lock", {"blocked_by": "x", "check": []}, "non-empty list"),
        (State.WAITING, "scheduled", {}, "needs `until`"),
        (State.WAITING, "marker", {"marker": "/etc/passwd"}, "inside the project"),
        (State.WAITING, "marker", {"marker": "../outside"}, "inside the project"),
        (State.USER, "decision", {}, "needs `needs`"),
    ],
)
def test_a_move_that_would_make_a_bad_ticket_is_refused_and_changes_nothing(
    board: Board, state: State, reason: str, front: dict[str, Any], message: str
) -> None:
    ticket = board.add("x", state=State.ACTIONABLE)
    before = snapshot(board.root)
    with pytest.raises(TicketFormatError, match=message):
        board.move(ticket.id, state, reason, front=front)
    assert snapshot(board.root) == before


@pytest.mark.parametrize(
    ("state", "reason", "message"),
    [
        (State.BLOCKED, None, "needs a reason"),
        (State.BLOCKED, "nope", "unknown reason"),
        (State.DONE, "lock", "has no reason folders"),
        (State.PARKED, "../../x", "unknown reason"),
    ],
)
def test_bad_reasons_are_refused(
    board: Board, state: State, reason: str | None, message: str
) -> None:
    with pytest.raises(BoardError, match=message):
        board.add("x", state=state, reason=reason)


def test_priority_and_fixed_keys_are_checked(board: Board) -> None:
    with pytest.raises(BoardError, match="unknown priority 'P4'"):
        board.add("x", priority="P4")
    ticket = board.add("x")
    with pytest.raises(BoardError, match="`id` of a ticket cannot be changed"):
        board.update(ticket.id, front={"id": "T-20250101-000000000"})
    with pytest.raises(BoardError, match="`created` is set by the board"):
        board.add("y", front={"created": "2020-01-01"})


def test_update_sets_and_removes_keys_and_keeps_the_body(board: Board) -> None:
    ticket = board.add("x", body="keep me\n", front={"report": "runs/r1/report.md"})
    updated = board.update(
        ticket.id, front={"runs": ["r1", "r2"], "last_run": "r2", "report": None}
    )
    assert updated.runs == ("r1", "r2") and updated.last_run == "r2" and updated.report is None
    assert updated.body == "keep me\n"
    assert board.get(ticket.id) == updated


def test_unknown_front_matter_keys_are_kept(board: Board) -> None:
    ticket = board.add("x", front={"labels": ["a", "b"], "estimate": {"hours": 3}})
    moved = board.move(ticket.id, State.DONE)
    assert moved.front["labels"] == ["a", "b"] and moved.front["estimate"] == {"hours": 3}


def test_actionable_by_priority_then_age(board: Board, clock: FakeClock) -> None:
    made = []
    for priority in ["P3", "P1", "P2", "P1"]:
        made.append(board.add(priority, priority=priority, state=State.ACTIONABLE))
        clock.advance(5)
    order = [t.id for t in board.load().actionable_by_priority()]
    assert order == [made[1].id, made[3].id, made[2].id, made[0].id]


def test_ids_have_the_documented_form_and_the_creation_date(board: Board) -> None:
    ticket = board.add("x")
    assert ticket.id.startswith("T-20250601-") and len(ticket.id) == len("T-20250601-123456789")


def test_a_given_id_must_be_free(board: Board) -> None:
    ticket = board.add("x")
    with pytest.raises(BoardError, match="is taken"):
        board.create(NewTicket("y"), ticket_id=ticket.id)
    with pytest.raises(BoardError, match="not a ticket id"):
        board.create(NewTicket("y"), ticket_id="../../etc")


def test_a_warm_load_returns_the_same_view_and_sees_every_change(board: Board) -> None:
    ticket = board.add("x", state=State.ACTIONABLE, body="short")
    first = board.load()
    assert board.load() is first
    with ticket.path.open("a", encoding="utf-8") as handle:  # an in-place edit, as an editor does
        handle.write(" and longer")
    second = board.load()
    assert second is not first and second.tickets[0].body == "short and longer"
    board.move(ticket.id, State.DONE)
    assert [t.state for t in board.load().tickets] == [State.DONE]
    ticket_path = board.get(ticket.id).path
    ticket_path.unlink()
    assert board.load().tickets == ()


def test_two_boards_on_one_root_share_the_cache(board: Board) -> None:
    board.add("x")
    view = board.load()
    assert Board(board.root).load() is view


def test_crlf_ticket_files_are_read(board: Board) -> None:
    path = board.root / "ACTIONABLE" / "T-20250601-000000001.md"
    path.write_bytes(
        b"---\r\nid: T-20250601-000000001\r\ntitle: Windows\r\npriority: P2\r\n"
        b"created: 2025-06-01T00:00:00Z\r\n---\r\n\r\nline\r\n"
    )
    (ticket,) = board.load().tickets
    assert ticket.title == "Windows" and ticket.body == "line\n"


def test_hand_written_yaml_in_other_styles_is_read(board: Board) -> None:
    path = board.root / "BLOCKED" / "quota" / "T-20250601-000000002.md"
    path.write_text(
        "---\nid: T-20250601-000000002\ntitle: 'quoted: single'  # a comment\npriority: P3\n"
        "created: 2025-06-01 10:00:00\nblocked_by: >\n  folded text\ncheck:\n  - curl\n  - -sf\n"
        "  - http://localhost/quota\n---\nbody\n",
        encoding="utf-8",
    )
    (ticket,) = board.load().tickets
    assert ticket.title == "quoted: single"
    assert ticket.created == datetime(2025, 6, 1, 10, tzinfo=UTC)
    assert ticket.check == ["curl", "-sf", "http://localhost/quota"]
    assert ticket.blocked_by == "folded text\n"


def test_board_root_that_does_not_exist_loads_empty(tmp_path: Path) -> None:
    view = Board(tmp_path / "none").load()
    assert view.tickets == () and view.informal == () and view.malformed == ()
    assert not (tmp_path / "none").exists()


def test_a_new_board_ignores_its_lock_and_temp_files_in_git(tmp_path: Path) -> None:
    board = Board(tmp_path / "tickets")
    board.load()
    assert not (board.root / ".gitignore").exists()  # reading writes no file but the lock
    board.add("x")
    assert (board.root / ".gitignore").read_text(encoding="utf-8").splitlines()[1:] == [
        ".lock",
        ".*.tmp",
    ]
    existing = Board(tmp_path / "existing")
    existing.root.mkdir()
    existing.add("y")
    assert not (existing.root / ".gitignore").exists()  # a folder of the user's: left alone


def test_a_board_in_a_git_work_tree_keeps_its_lock_in_the_git_folder(tmp_path: Path) -> None:
    import subprocess

    subprocess.run(["git", "init", "--quiet", str(tmp_path)], check=True)
    board = Board(tmp_path / "tickets")
    board.root.mkdir()  # a folder of the user's: no .gitignore is written into it
    board.add("x")
    assert not (board.root / ".lock").exists()
    (lock,) = (tmp_path / ".git" / "tether").glob("board-*.lock")
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    assert [line[3:].split("/")[1] for line in status.stdout.splitlines()] == ["INBOX"]
    # a linked work tree has a git folder of its own
    subprocess.run(["git", "-C", str(tmp_path), "add", "-A"], check=True)
    subprocess.run(
        [
            "git",
            "-C",
            str(tmp_path),
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "--quiet",
            "-m",
            "board",
        ],
        check=True,
    )
    linked = tmp_path.parent / f"{tmp_path.name}-linked"
    subprocess.run(
        ["git", "-C", str(tmp_path), "worktree", "add", "--quiet", str(linked)], check=True
    )
    Board(linked / "tickets").add("y")
    assert not (linked / "tickets" / ".lock").exists()
    assert list((tmp_path / ".git" / "worktrees").glob("*/tether/board-*.lock"))
    assert lock.exists()
