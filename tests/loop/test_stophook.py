"""The Stop hook: the decision of a tick, stop_hook_active honoured, never a trapped session."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.loop.conftest import Project

from tether.board import State

TETHER = str(Path(sys.executable).parent / "tether")


def _hook(project: Project, harness: str, payload: Any) -> subprocess.CompletedProcess[str]:
    raw = payload if isinstance(payload, str) else json.dumps(payload)
    return project.tether("loop", "stop-hook", "--harness", harness, input=raw, timeout=60)


def _payload(project: Project, active: bool, session: str = "sess-1") -> dict[str, Any]:
    return {
        "session_id": session,
        "transcript_path": "/dev/null",
        "cwd": str(project.root),
        "hook_event_name": "Stop",
        "stop_hook_active": active,
    }


@pytest.mark.slow
@pytest.mark.parametrize("harness", ["claude-code", "codex"])
def test_blocks_while_level1_has_work_and_lets_go_after_the_cap(
    project: Project, harness: str
) -> None:
    ticket = project.add("Fix the typo")
    answers = []
    for active in (False, True, True, True):
        done = _hook(project, harness, _payload(project, active))
        assert done.returncode == 0, done.stderr
        answers.append(done.stdout.strip())
    blocks = [json.loads(a) for a in answers[:3]]
    assert [b["decision"] for b in blocks] == ["block", "block", "block"]
    assert f'ACTIONABLE {ticket.id} (P2) "Fix the typo"' in blocks[0]["reason"]
    assert "block 1 of at most 3" in blocks[0]["reason"]
    assert "block 3 of at most 3" in blocks[2]["reason"]
    assert answers[3] == ("{}" if harness == "codex" else "")  # the 4th stop goes through
    assert "Do not do this unit in this session" in blocks[0]["reason"]
    assert project.location(ticket.id) == "ACTIONABLE"  # the hook never moves anything


def test_a_new_turn_starts_the_count_again(project: Project) -> None:
    project.add("Fix the typo")
    for active in (False, True, True, True):
        _hook(project, "claude-code", _payload(project, active))
    fresh = _hook(project, "claude-code", _payload(project, False))
    assert json.loads(fresh.stdout)["reason"].endswith("(stop hook block 1 of at most 3 in a row).")


def test_every_stop_line_lets_the_agent_stop_and_is_printed(project: Project) -> None:
    project.add("Blocked", State.BLOCKED, "lock", blocked_by="x", check=["false"])
    blind = _hook(project, "claude-code", _payload(project, False))
    assert blind.returncode == 0, blind.stderr
    line = json.loads(blind.stdout)["systemMessage"]
    assert line.startswith("TETHER-LOOP: STOP (blind, 4/4 sources unavailable")
    assert line in blind.stderr
    project.all_sources_ready()
    project.add("Pick the licence", State.USER, "decision", needs="a choice")
    for harness, expected in (("codex", "{}"), ("copilot", "")):
        done = _hook(project, harness, _payload(project, False))
        assert done.returncode == 0 and done.stdout.strip() == expected
        assert "TETHER-LOOP: STOP (user-only)" in done.stderr


def test_a_blocked_ticket_whose_check_passes_is_work_as_in_a_tick(project: Project) -> None:
    ticket = project.add("Blocked", State.BLOCKED, "lock", blocked_by="x", check=["true"])
    done = _hook(project, "claude-code", _payload(project, False))
    assert json.loads(done.stdout)["decision"] == "block"
    assert project.location(ticket.id) == "BLOCKED/lock"  # the hook only decides


def test_blocks_while_level2_finds_work_and_names_tether_loop_tick(project: Project) -> None:
    project.all_sources_ready(
        organic={"status": "found", "items": [{"id": "m1", "text": "Rotate the test keys"}]}
    )
    done = _hook(project, "claude-code", _payload(project, False))
    answer = json.loads(done.stdout)
    assert answer["decision"] == "block", done.stderr
    reason = answer["reason"]
    assert "level 2 found new work (memory.organic: found" in reason
    assert "Do not do this unit in this session" in reason
    assert "Run `tether loop tick` now" in reason and "fresh session" in reason
    dry = subprocess.run(
        [TETHER, "loop", "tick", "--dry-run"],
        cwd=project.root,
        env=project.env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert dry.returncode == 0 and dry.stdout.splitlines()[-1].startswith("TETHER-LOOP: CONTINUE")
    assert not project.board.load().untriaged()  # the hook wrote nothing to the board


def test_copilot_agent_stop_payload_in_camel_case(project: Project) -> None:
    project.note("idea.txt", "Look into the flaky test\n")
    payload = {
        "sessionId": "c-1",
        "timestamp": 1,
        "cwd": str(project.root),
        "stopReason": "end_turn",
        "stopHookActive": False,
    }
    done = _hook(project, "copilot", payload)
    answer = json.loads(done.stdout)
    assert answer["decision"] == "block"
    assert "INBOX has 1 untriaged entry" in answer["reason"]
    assert "tether loop tick" in answer["reason"]


@pytest.mark.parametrize("payload", ["not json", "[1, 2]", ""])
def test_a_bad_payload_never_traps_the_session(project: Project, payload: str) -> None:
    project.add("Fix the typo")
    done = _hook(project, "claude-code", payload)
    assert done.returncode == 0
    if payload:
        assert done.stdout == "" and "letting the agent stop" in done.stderr


def test_a_broken_config_never_traps_the_session(project: Project) -> None:
    project.add("Fix the typo")
    (project.root / "tether.toml").write_text("[loop]\nguard_interval = 'soon'\n")
    done = _hook(project, "codex", _payload(project, False))
    assert done.returncode == 0 and done.stdout.strip() == "{}"
    assert "loop.guard_interval" in done.stderr
