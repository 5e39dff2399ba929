"""Inside a room the gate refuses every tool call but the room's reads and its conclusion."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from tests.room.room_support import TETHER, room_question, write_profile
from tests.wikigen import GenWiki

from tether.gate.roomrule import allowed_command, check


@pytest.mark.slow
def test_a_room_agent_that_cats_a_page_is_refused_and_the_refusal_is_logged(
    gen: GenWiki, tmp_path: Path, tether_home: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    page = next(gen.root.rglob("concept-00004.md"))
    other = next(gen.root.rglob("concept-00100.md"))
    conclusion = project / "c.md"
    conclusion.write_text(
        "It is tracked by the operators [[concept-00004]] (stale).\n\n"
        "- The other one says more [[concept-00100]].\n"
    )
    write_profile(
        project,
        [
            f"cat {other}",
            f"grep -rl operators {gen.root}",
            f"{TETHER} wiki read concept-00004",
            f"{TETHER} wiki read concept-00004 ; cat {page}",
            f"{TETHER} room conclude {conclusion}",
        ],
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("TETHER_ROOM")}
    env.pop("TETHER_DEPTH", None)
    question = room_question(gen.word_of("concept-00004"))
    done = subprocess.run(
        [TETHER, "room", "open", "--root", str(gen.root), "--json", question],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
        env=env,
    )
    assert done.returncode == 40, done.stderr  # it cites a page it only read with cat
    result = json.loads(done.stdout)
    log = [
        json.loads(line)
        for line in (Path(result["folder"]) / "reads.jsonl").read_text().splitlines()
    ]
    assert [r["outcome"] for r in log] == ["refused-tool", "refused-tool", "read", "refused-tool"]
    assert log[0]["asked"] == f"Bash: cat {other}"
    assert log[1]["asked"] == f"Bash: grep -rl operators {gen.root}"
    assert result["reads"]["refused_tools"] == [r["asked"] for r in log if r["page_id"] is None]
    assert result["reads"]["read"] == ["concept-00004"]
    violations = [v["message"] for v in result["check"]["violations"]]
    assert violations == [
        "cites [[concept-00100]], which this room did not read (read: concept-00004)"
    ]
    events = (tether_home / "runs" / result["run"]["run_id"] / "events.jsonl").read_text()
    assert (
        f"tether: call refused. Inside room {result['room']} every read goes through the "
        "room's budget (rule 1: read only within the budget)"
    ) in events
    assert f"Refused: Bash: cat {other}." in events


def test_only_the_room_s_own_commands_pass() -> None:
    assert allowed_command("tether wiki read concept-00004")
    assert allowed_command("/opt/venv/bin/tether wiki read 'Sync your notes across devices'")
    assert allowed_command("tether room conclude /tmp/c.md")
    assert allowed_command("tether room conclude - <<'EOF'\nIt is so [[a]].\nEOF")
    assert not allowed_command("tether room conclude - <<'EOF'\nx\nEOF\ncat /etc/passwd")
    assert not allowed_command("tether wiki read a; cat wiki/a.md")
    assert not allowed_command("tether wiki read $(cat wiki/a.md)")
    assert not allowed_command("tether wiki read a | tee x")
    assert not allowed_command("tether wiki search sync")
    assert not allowed_command("cat wiki/Attachments.md")


def test_outside_a_room_the_rule_says_nothing(tmp_path: Path) -> None:
    payload = {"tool_name": "Read", "tool_input": {"file_path": "/etc/passwd"}}
    assert check("Read", payload, {}) is None
    room = {"TETHER_ROOM_DIR": str(tmp_path), "TETHER_ROOM_ID": "r1"}
    refused = check("Read", payload, room)
    assert refused is not None and "Refused: Read: /etc/passwd." in refused
    write = {"tool_name": "Write", "tool_input": {"file_path": str(tmp_path / "conclusion.md")}}
    assert check("Write", write, room) is None
    elsewhere = {"tool_name": "Write", "tool_input": {"file_path": str(tmp_path / "room.json")}}
    assert check("Write", elsewhere, room) is not None
    logged = [json.loads(x) for x in (tmp_path / "reads.jsonl").read_text().splitlines()]
    assert [r["asked"] for r in logged] == [
        "Read: /etc/passwd",
        f"Write: {tmp_path / 'room.json'}",
    ]
