"""Import and export of beads' issues.jsonl and Backlog.md task folders, both ways."""

from __future__ import annotations

import json
import shutil
from datetime import date
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.board.conftest import FIXTURES, snapshot

from tether.board import Board, State
from tether.board.interop import export_to, import_from

BEADS = FIXTURES / "beads" / "issues.jsonl"
BACKLOG = FIXTURES / "backlog"


def _jsonl(path: Path) -> dict[str, dict[str, Any]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return {json.loads(line)["id"]: json.loads(line) for line in lines if line.strip()}


def _by_origin(board: Board) -> dict[str, Any]:
    return {t.front["origin"].split(":", 1)[1]: t for t in board.load().tickets}


# ---------------------------------------------------------------- beads


def test_beads_import_places_every_status(board: Board) -> None:
    result = import_from(board, "beads", BEADS)
    assert len(result.created) == 8 and result.updated == [] and result.unchanged == []
    assert result.skipped == [("bd-k1l2", "deleted in beads (tombstone)")]
    t = _by_origin(board)
    assert {k: v.location for k, v in t.items()} == {
        "bd-a1b2": "DONE",
        "bd-c3d4": "ACTIONABLE",
        "bd-e5f6": "BLOCKED/dependency",  # open, blocked by the open bd-c3d4
        "bd-g7h8": "USER/data",  # blocked, but names no blocker
        "bd-i9j0": "WAITING/scheduled",
        "bd-m3n4": "ACTIONABLE",  # its blocker bd-a1b2 is closed
        "bd-o5p6": "PARKED/backlog",
        "bd-q7r8": "PARKED/skip",
    }
    assert t["bd-c3d4"].priority == "P1" and t["bd-i9j0"].priority == "P3"
    assert t["bd-c3d4"].body.startswith("After the session expires")
    assert t["bd-c3d4"].id.startswith("T-20251003-")
    assert t["bd-e5f6"].check == t["bd-c3d4"].id
    assert "bd-c3d4" in (t["bd-e5f6"].blocked_by or "")
    assert t["bd-i9j0"].until == date(2026, 1, 15)
    assert (
        t["bd-m3n4"].front["origin_fields"]["acceptance_criteria"] == "- [ ] a new user can sign up"
    )


def test_beads_round_trip_gives_back_every_issue(board: Board, tmp_path: Path) -> None:
    import_from(board, "beads", BEADS)
    out = tmp_path / "out.jsonl"
    result = export_to(board, "beads", out)
    assert len(result.written) == 8
    original = _jsonl(BEADS)
    del original["bd-k1l2"]  # a tombstone is not imported
    assert _jsonl(out) == original


def test_beads_export_into_the_source_keeps_it_byte_for_byte(board: Board, tmp_path: Path) -> None:
    import_from(board, "beads", BEADS)
    target = tmp_path / ".beads" / "issues.jsonl"
    target.parent.mkdir()
    shutil.copy(BEADS, target)
    result = export_to(board, "beads", target.parent)  # the .beads folder works too
    assert result.written == [] and len(result.unchanged) == 8
    assert target.read_bytes() == BEADS.read_bytes()


def test_beads_reimport_is_idempotent_and_takes_only_changes(board: Board, tmp_path: Path) -> None:
    import_from(board, "beads", BEADS)
    before = snapshot(board.root)
    again = import_from(board, "beads", BEADS)
    assert again.created == [] and again.updated == [] and len(again.unchanged) == 8
    assert snapshot(board.root) == before

    # The board moves on: a re-import of the unchanged source does not undo it.
    fix = _by_origin(board)["bd-c3d4"]
    board.move(fix.id, State.DONE, note="fixed")
    assert import_from(board, "beads", BEADS).updated == []
    assert board.get(fix.id).state is State.DONE

    # The source changes: that one ticket is updated.
    changed = tmp_path / "issues.jsonl"
    lines = (
        BEADS.read_text(encoding="utf-8")
        .replace('"title":"Revisit caching"', '"title":"Revisit caching soon"')
        .replace('"status":"deferred","priority":4', '"status":"deferred","priority":1')
    )
    changed.write_text(lines, encoding="utf-8")
    result = import_from(board, "beads", changed)
    cache = _by_origin(board)["bd-i9j0"]
    assert result.updated == [("bd-i9j0", cache.id)]
    assert (cache.title, cache.priority, cache.location) == (
        "Revisit caching soon",
        "P1",
        "WAITING/scheduled",
    )


def test_beads_export_of_changed_and_native_tickets(board: Board, tmp_path: Path) -> None:
    import_from(board, "beads", BEADS)
    fix = _by_origin(board)["bd-c3d4"]
    board.move(fix.id, State.DONE)
    native = board.add(
        "Native work", priority="P3", body="Made in tether.\n", state=State.ACTIONABLE
    )
    out = tmp_path / "issues.jsonl"
    shutil.copy(BEADS, out)
    export_to(board, "beads", out)
    issues = _jsonl(out)
    assert issues["bd-k1l2"]["status"] == "tombstone"  # not on the board: kept as it was
    assert issues["bd-c3d4"]["status"] == "closed" and "closed_at" in issues["bd-c3d4"]
    assert issues["bd-c3d4"]["updated_at"] != "2025-10-03T08:30:00.123456789Z"
    assert issues[native.id] | {"updated_at": None} == {
        "id": native.id,
        "title": "Native work",
        "description": "Made in tether.\n",
        "status": "open",
        "priority": 3,
        "issue_type": "task",
        "created_at": "2025-06-01T09:30:00Z",
        "updated_at": None,
    }
    # ...and the native ticket comes back as itself, not as a copy.
    assert import_from(board, "beads", out).created == []


def test_beads_bad_lines_are_skipped_with_the_reason(board: Board, tmp_path: Path) -> None:
    source = tmp_path / "issues.jsonl"
    source.write_text(
        '{"id":"bd-1","title":"ok","status":"open","priority":2,'
        '"created_at":"2025-01-01T00:00:00Z"}\nnot json\n{"title":"no id"}\n'
        '{"id":"bd-2"}\n',
        encoding="utf-8",
    )
    result = import_from(board, "beads", source)
    assert [s for s, _ in result.skipped] == ["line 2", "line 3", "bd-2"]
    assert len(result.created) == 1


# ---------------------------------------------------------------- Backlog.md


def _task_files(folder: Path) -> dict[str, tuple[Any, str]]:
    found = {}
    for path in folder.rglob("*.md"):
        _, front, body = path.read_text(encoding="utf-8").split("---\n", 2)
        found[path.name] = (yaml.safe_load(front), body.removeprefix("\n"))
    return found


def test_backlog_import_places_every_task(board: Board) -> None:
    result = import_from(board, "backlog", BACKLOG)
    assert len(result.created) == 6 and result.skipped == []
    t = _by_origin(board)
    assert {k: (v.location, v.priority) for k, v in t.items()} == {
        "task-1": ("DONE", "P2"),
        "task-2": ("ACTIONABLE", "P1"),
        "task-3": ("BLOCKED/dependency", "P2"),  # depends on task-2, still in progress
        "task-4": ("INBOX", "P3"),  # a custom status: someone must look at it
        "task-5": ("PARKED/backlog", "P2"),  # a draft
        "task-6": ("DONE", "P2"),  # in completed/
    }
    assert t["task-3"].check == t["task-2"].id
    assert t["task-2"].body == "## Description\n\nEmail and password login with sessions.\n"
    assert t["task-2"].id.startswith("T-20250604-")


def test_backlog_round_trip_into_a_new_folder(board: Board, tmp_path: Path) -> None:
    import_from(board, "backlog", BACKLOG)
    export_to(board, "backlog", tmp_path / "backlog")
    assert _task_files(tmp_path / "backlog") == _task_files(BACKLOG)
    assert sorted(p.parent.name for p in (tmp_path / "backlog").rglob("*.md")) == ["tasks"] * 6


def test_backlog_export_into_the_source_changes_no_byte(board: Board, tmp_path: Path) -> None:
    import_from(board, "backlog", BACKLOG)
    copy = tmp_path / "backlog"
    shutil.copytree(BACKLOG, copy)
    result = export_to(board, "backlog", copy)
    assert result.written == [] and len(result.unchanged) == 6
    assert snapshot(copy) == snapshot(BACKLOG)


def test_backlog_reimport_is_idempotent_and_native_tickets_get_new_task_ids(
    board: Board, tmp_path: Path
) -> None:
    import_from(board, "backlog", BACKLOG)
    before = snapshot(board.root)
    assert len(import_from(board, "backlog", BACKLOG).unchanged) == 6
    assert snapshot(board.root) == before

    copy = tmp_path / "backlog"
    shutil.copytree(BACKLOG, copy)
    login = _by_origin(board)["task-2"]
    board.move(login.id, State.DONE)
    native = board.add("Write release notes", priority="P1", state=State.ACTIONABLE)
    export_to(board, "backlog", copy)
    files = _task_files(copy)
    assert files["task-2 - Add-login.md"][0]["status"] == "Done"
    front, _ = files["task-7 - Write-release-notes.md"]
    assert front["tether_id"] == native.id and front["status"] == "To Do"
    assert front["priority"] == "high"
    # Importing the exported folder finds both tickets again: nothing new, nothing changed.
    again = import_from(board, "backlog", copy)
    assert again.created == [] and again.updated == []


def test_backlog_title_change_renames_the_file(board: Board, tmp_path: Path) -> None:
    copy = tmp_path / "backlog"
    shutil.copytree(BACKLOG, copy)
    import_from(board, "backlog", copy)
    task = _by_origin(board)["task-4"]
    board.update(task.id, front={"title": "Review the copy: v2"})
    export_to(board, "backlog", copy)
    names = sorted(p.name for p in (copy / "tasks").glob("task-4*"))
    assert names == ["task-4 - Review-the-copy-v2.md"]


def test_unknown_format_is_refused(board: Board) -> None:
    from tether.board import BoardError

    with pytest.raises(BoardError, match="unknown format"):
        import_from(board, "jira", BEADS)


@pytest.mark.parametrize("fmt", ["beads", "backlog"])
def test_exporting_again_leaves_every_unchanged_item_byte_for_byte(
    board: Board, tmp_path: Path, fmt: str
) -> None:
    """Tickets made on the board (not imported): a second export writes nothing, even
    after their files were touched or copied, and a changed ticket changes only its item."""
    import os

    source = tmp_path / "source.jsonl" if fmt == "beads" else tmp_path / "backlog"
    if fmt == "backlog":
        import_from(board, "backlog", BACKLOG)
        shutil.copytree(BACKLOG, source)
    one = board.add("Write the changelog", priority="P1", state=State.ACTIONABLE, body="Text.\n")
    two = board.add("Sort the imports", state=State.ACTIONABLE)
    first = export_to(board, fmt, source)
    assert first.written

    def exported() -> dict[str, bytes]:
        if source.is_dir():
            return snapshot(source)
        return {f"line {n}": line for n, line in enumerate(source.read_bytes().splitlines())}

    before = exported()
    for ticket in (one, two):  # a copy or a touch moves the file times, not a word
        path = board.get(ticket.id).path
        later = path.stat().st_mtime + 3600
        os.utime(path, (later, later))
    second = export_to(board, fmt, source)
    assert second.written == []
    assert exported() == before
    board.update(two.id, front={"title": "Sort the imports, then the names"})
    third = export_to(board, fmt, source)
    assert [ticket_id for ticket_id, _ in third.written] == [two.id]
    after = exported()
    changed = {name for name in after.keys() | before.keys() if after.get(name) != before.get(name)}
    assert len(changed) == (1 if fmt == "beads" else 2)  # backlog: the renamed file, old and new
