"""``tether board ...`` through the real console script, in real subprocesses."""

from __future__ import annotations

import json
from pathlib import Path

from tests.board.conftest import FIXTURES, tether


def _json(done: object) -> object:
    assert done.returncode == 0, done.stderr  # type: ignore[attr-defined]
    return json.loads(done.stdout)  # type: ignore[attr-defined]


def test_add_show_move_list_with_json(tmp_path: Path) -> None:
    added = _json(
        tether(
            "board",
            "add",
            "Fix the build",
            "-p",
            "P1",
            "--body",
            "It fails.\n",
            "--state",
            "ACTIONABLE",
            "--json",
            cwd=tmp_path,
        )
    )
    assert isinstance(added, dict)
    ticket_id = added["id"]
    assert added["location"] == "ACTIONABLE" and added["priority"] == "P1"
    assert added["body"] == "It fails.\n"
    assert Path(added["path"]) == tmp_path / "tickets" / "ACTIONABLE" / f"{ticket_id}.md"
    assert set(added) >= {
        "id",
        "title",
        "priority",
        "created",
        "state",
        "reason",
        "path",
        "blocked_by",
        "check",
        "until",
        "marker",
        "needs",
        "runs",
        "report",
        "last_run",
        "front",
        "body",
    }

    shown = _json(tether("board", "show", ticket_id, "--json", cwd=tmp_path))
    assert shown == added

    moved = _json(
        tether(
            "board",
            "move",
            ticket_id,
            "blocked/quota",
            "--blocked-by",
            "API quota",
            "--check",
            "curl -sf 'http://localhost:8/quota ok'",
            "--note",
            "quota hit",
            "--json",
            cwd=tmp_path,
        )
    )
    assert isinstance(moved, dict)
    assert moved["location"] == "BLOCKED/quota"
    assert moved["check"] == ["curl", "-sf", "http://localhost:8/quota ok"]
    assert "quota hit" in moved["body"]

    listed = _json(tether("board", "list", "--json", cwd=tmp_path))
    assert isinstance(listed, dict)
    assert listed["counts"]["BLOCKED/quota"] == 1
    assert [t["id"] for t in listed["tickets"]] == [ticket_id]
    assert "body" not in listed["tickets"][0]
    assert listed["informal"] == [] and listed["malformed"] == []

    only = _json(tether("board", "list", "--state", "BLOCKED", "--json", cwd=tmp_path))
    assert isinstance(only, dict) and len(only["tickets"]) == 1
    none = _json(tether("board", "list", "--state", "DONE", "--json", cwd=tmp_path))
    assert isinstance(none, dict) and none["tickets"] == []


def test_show_prints_the_file(tmp_path: Path) -> None:
    added = _json(tether("board", "add", "x", "--json", cwd=tmp_path))
    assert isinstance(added, dict)
    shown = tether("board", "show", added["id"], cwd=tmp_path)
    assert shown.stdout == f"# INBOX: {added['path']}\n" + Path(added["path"]).read_text()


def test_triage_lists_and_triages_with_json(tmp_path: Path) -> None:
    inbox = tmp_path / "tickets" / "INBOX"
    inbox.mkdir(parents=True)
    (inbox / "idea.txt").write_text("Cache the dependencies\n", encoding="utf-8")
    listed = _json(tether("board", "triage", "--json", cwd=tmp_path))
    assert listed == {"untriaged": [str(inbox / "idea.txt")]}
    done = _json(
        tether(
            "board",
            "triage",
            str(inbox / "idea.txt"),
            "-p",
            "P1",
            "--state",
            "WAITING/scheduled",
            "--until",
            "2030-01-02",
            "--json",
            cwd=tmp_path,
        )
    )
    assert isinstance(done, dict)
    assert (done["title"], done["location"], done["until"]) == (
        "Cache the dependencies",
        "WAITING/scheduled",
        "2030-01-02",
    )
    assert _json(tether("board", "triage", "--json", cwd=tmp_path)) == {"untriaged": []}
    text = tether("board", "triage", cwd=tmp_path)
    assert text.stdout == "INBOX is empty: nothing to triage.\n"


def test_list_text_shows_notes_and_malformed_files(tmp_path: Path) -> None:
    tether("board", "init", cwd=tmp_path)
    (tmp_path / "tickets" / "INBOX" / "note.md").write_text("hello\n", encoding="utf-8")
    bad = tmp_path / "tickets" / "DONE" / "T-20250601-000000001.md"
    bad.write_text("---\nid: T-20250601-000000001\n---\n", encoding="utf-8")
    done = tether("board", "list", cwd=tmp_path)
    assert done.returncode == 0
    assert f"untriaged note: {tmp_path}/tickets/INBOX/note.md" in done.stdout
    assert (
        done.stderr == f"malformed: {bad}: missing `title` (one line of text; quote it if it "
        "has a colon).\n"
    )
    listed = _json(tether("board", "list", "--json", cwd=tmp_path))
    assert isinstance(listed, dict)
    assert listed["malformed"] == [
        {
            "path": str(bad),
            "error": "missing `title` (one line of text; quote it if it has a colon).",
        }
    ]


def test_errors_exit_2_with_a_message(tmp_path: Path) -> None:
    cases = [
        (["board", "show", "T-20250601-000000001"], "no ticket 'T-20250601-000000001'"),
        (["board", "add", "x", "-p", "P9"], "unknown priority 'P9'"),
        (["board", "add", "x", "--state", "BLOCKED"], "BLOCKED needs a reason"),
        (["board", "add", "x", "--state", "BLOCKED/lock"], "needs `blocked_by`"),
        (["board", "add", "x", "--state", "WAITING/scheduled", "--until", "soon"], "is not a date"),
        (["board", "add", "x", "--state", "LATER"], "unknown state 'LATER'"),
        (["board", "add", "x", "--check", "unbalanced 'quote"], "No closing quotation"),
    ]
    for args, message in cases:
        done = tether(*args, cwd=tmp_path)
        assert done.returncode == 2, args
        assert message in done.stderr, (args, done.stderr)
        assert done.stderr.startswith("tether: error: ")


def test_board_option_and_body_from_stdin(tmp_path: Path) -> None:
    other = tmp_path / "elsewhere" / "board"
    added = _json(
        tether(
            "board",
            "add",
            "x",
            "--body-file",
            "-",
            "--board",
            str(other),
            "--json",
            cwd=tmp_path,
            stdin="from stdin\n",
        )
    )
    assert isinstance(added, dict)
    assert Path(added["path"]).parent == other / "INBOX" and added["body"] == "from stdin\n"
    assert not (tmp_path / "tickets").exists()


def test_import_and_export_with_json(tmp_path: Path) -> None:
    result = _json(
        tether(
            "board",
            "import",
            "--from",
            "beads",
            str(FIXTURES / "beads" / "issues.jsonl"),
            "--json",
            cwd=tmp_path,
        )
    )
    assert isinstance(result, dict)
    assert len(result["created"]) == 8
    assert result["skipped"] == [{"source_id": "bd-k1l2", "why": "deleted in beads (tombstone)"}]
    again = tether(
        "board", "import", "--from", "beads", str(FIXTURES / "beads" / "issues.jsonl"), cwd=tmp_path
    )
    assert again.stdout.endswith("0 created, 0 updated, 8 unchanged, 1 skipped\n")
    exported = _json(
        tether(
            "board", "export", "--to", "backlog", str(tmp_path / "backlog"), "--json", cwd=tmp_path
        )
    )
    assert isinstance(exported, dict)
    assert sorted(e["foreign_id"] for e in exported["written"]) == [
        f"task-{n}" for n in range(1, 9)
    ]
    back = _json(
        tether(
            "board",
            "import",
            "--from",
            "backlog",
            str(FIXTURES / "backlog"),
            "--json",
            cwd=tmp_path,
        )
    )
    assert isinstance(back, dict) and len(back["created"]) == 6
    bad = tether("board", "import", "--from", "trello", "x", cwd=tmp_path)
    assert bad.returncode == 2 and "Invalid value for '--from'" in bad.stderr


def test_the_board_option_default_follows_loop_board(tmp_path: Path) -> None:
    """Without --board, commands use `[loop] board`, and the help says so."""
    (tmp_path / "tether.toml").write_text('[loop]\nboard = "work/board"\n', encoding="utf-8")
    added = _json(tether("board", "add", "x", "--json", cwd=tmp_path))
    assert isinstance(added, dict)
    assert Path(added["path"]).parent == tmp_path / "work" / "board" / "INBOX"
    for command in ("init", "add", "show", "list", "move", "triage"):
        done = tether("board", command, "--help", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        text = " ".join(done.stdout.split())
        assert "--board DIRECTORY The ticket folder (default: [loop] board, else " in text, command
        assert "default: <project root>/tickets)" not in text
