"""The notification type and tool input the gate records, as the watchdog reads them.

The hook payloads are Claude Code's own, recorded from an interactive session
(tests/gate/record_golden.py notifications): PreToolUse of ``touch
notified.txt``, its PermissionRequest, the ``permission_prompt`` notification
six seconds later, the approved call, the stop, and the ``idle_prompt``
notification. They go through the real ``tether-gate`` under the session id of
the subagent they are played for.
"""

from __future__ import annotations

import json
import shlex
import sqlite3
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.watch.watch_support import TETHER_GATE, TmuxLab, agent_argv, wait_until

from tether.clock import SystemClock
from tether.config.schema import WatchSettings
from tether.gate import gate_db
from tether.gate.eventlog import GateReader
from tether.watch.confirm import Wait, from_gate
from tether.watch.cycle_report import Decision
from tether.watch.daemon import Watchdog
from tether.watch.registry import Registration, WakeRecord, add_orchestrator, list_wakes

SEQUENCE = (
    Path(__file__).resolve().parents[1]
    / "gate"
    / "golden"
    / "claude-code"
    / "needs-permission.sequence.jsonl"
)
SHOWN_INPUT = '{"command": "touch notified.txt", "description": "mock step 1"}'


def _recorded(*wanted: str) -> list[dict[str, Any]]:
    """The recorded payloads named ``Event`` or ``Event.notification_type``, in this order."""
    payloads = [json.loads(line) for line in SEQUENCE.read_text("utf-8").splitlines()]

    def name(p: dict[str, Any]) -> str:
        kind = p.get("notification_type")
        return f"{p['hook_event_name']}.{kind}" if kind else str(p["hook_event_name"])

    return [next(p for p in payloads if name(p) == w) for w in wanted]


def _play(session: str, payloads: list[dict[str, Any]], cwd: Path, **changes: Any) -> None:
    for payload in payloads:
        data = {**payload, "session_id": session, **changes}
        subprocess.run(
            [TETHER_GATE, "hook", "--harness", "claude-code"],
            input=json.dumps(data),
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
            cwd=cwd,
        )


def _wait_of(home: Path, session: str) -> Wait | None:
    reader = GateReader(home)
    try:
        return from_gate(reader.recent([session]))
    finally:
        reader.close()


def test_permission_prompt_names_the_tool_and_input_the_gate_recorded(
    tether_home: Path, tmp_path: Path
) -> None:
    _play(
        "s1",
        _recorded("PreToolUse", "PermissionRequest", "Notification.permission_prompt"),
        tmp_path,
    )
    wait = _wait_of(tether_home, "s1")
    assert wait is not None
    (pre,) = _recorded("PreToolUse")
    assert (wait.kind, wait.tool, wait.input, wait.call_id, wait.signal) == (
        "confirmation",
        "Bash",
        SHOWN_INPUT,
        pre["tool_use_id"],
        "Notification permission_prompt",
    )
    assert wait.describe(wait.since + 7) == (
        f"waits for confirmation of Bash {SHOWN_INPUT} (Notification permission_prompt, 7 s)"
    )


def test_idle_prompt_is_a_wait_for_input_whatever_came_before(
    tether_home: Path, tmp_path: Path
) -> None:
    # after the whole turn, as recorded
    _play(
        "s1",
        _recorded(
            "PreToolUse",
            "PermissionRequest",
            "Notification.permission_prompt",
            "PostToolUse",
            "Stop",
            "Notification.idle_prompt",
        ),
        tmp_path,
    )
    wait = _wait_of(tether_home, "s1")
    assert wait is not None and (wait.kind, wait.signal) == ("input", "Notification idle_prompt")
    # right after a tool call started (a turn that ended without a Stop): the
    # type decides, where the event before it would have suggested a permission prompt
    _play("s2", _recorded("PreToolUse", "Notification.idle_prompt"), tmp_path)
    wait = _wait_of(tether_home, "s2")
    assert wait is not None and wait.kind == "input"


def test_rows_without_a_type_fall_back_to_the_event_before(
    tether_home: Path, tmp_path: Path
) -> None:
    (pre, idle) = _recorded("PreToolUse", "Notification.idle_prompt")
    _play("s1", [pre], tmp_path)
    _play("s1", [idle], tmp_path, notification_type=None)  # as an older gate recorded it
    wait = _wait_of(tether_home, "s1")
    assert wait is not None
    assert (wait.kind, wait.tool, wait.signal) == ("confirmation", "Bash", "Notification")
    # a type tether does not know is read the same way
    _play("s2", [pre], tmp_path)
    _play("s2", [idle], tmp_path, notification_type="brand_new_prompt")
    wait = _wait_of(tether_home, "s2")
    assert wait is not None and wait.kind == "confirmation"


def test_notifications_that_only_inform_are_passed_over(tether_home: Path, tmp_path: Path) -> None:
    asked = _recorded("PreToolUse", "PermissionRequest")
    _play("s1", asked, tmp_path)
    (idle,) = _recorded("Notification.idle_prompt")
    _play("s1", [idle], tmp_path, notification_type="auth_success", message="Signed in")
    wait = _wait_of(tether_home, "s1")
    assert wait is not None
    assert (wait.kind, wait.tool, wait.input, wait.signal) == (
        "confirmation",
        "Bash",
        SHOWN_INPUT,
        "PermissionRequest",
    )


def test_the_reader_copes_with_a_gate_db_the_gate_has_not_migrated_yet(
    tether_home: Path, tmp_path: Path
) -> None:
    tether_home.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(tether_home / "gate.db", isolation_level=None)
    gate_db.m001_initial(conn)
    conn.execute("PRAGMA user_version = 1")
    conn.execute(
        "INSERT INTO events (at, session_id, context_key, id_source, harness, event, "
        "tool_name, tool_use_id, decision) VALUES (?, 's1', 's1', 'payload', 'claude-code', "
        "'Notification', NULL, NULL, 'record')",
        (time.time(),),
    )
    conn.close()
    reader = GateReader(tether_home)
    (old,) = reader.recent(["s1"])
    assert (old.event, old.notification_type, old.tool_input) == ("Notification", None, None)
    # the next hook call migrates the file; the same reader sees the new columns
    _play("s1", _recorded("Notification.idle_prompt"), tmp_path)
    new, old_again = reader.recent(["s1"])
    assert (new.notification_type, new.message) == (
        "idle_prompt",
        "Claude is waiting for your input",
    )
    assert old_again.notification_type is None
    reader.close()


def _watchdog(lab: TmuxLab, subagents: Path, home: Path, conn: sqlite3.Connection) -> Watchdog:
    settings = WatchSettings(
        subagents_folders=[str(subagents)],
        tmux_socket=lab.socket,
        idle_threshold=0.2,
        wake_min_interval=0,
        notify=False,
    )
    return Watchdog(settings, home, conn, clock=SystemClock())


def _decision(dog: Watchdog, wanted: Callable[[str], bool], what: str) -> Decision:
    def probe() -> Decision | None:
        decision = dog.check().decisions[0]
        return decision if wanted(decision.action) else None

    return wait_until(probe, what=what)


def _next_wake(dog: Watchdog, what: str) -> WakeRecord:
    def probe() -> WakeRecord | None:
        report = dog.check()
        return report.wakes[0] if report.wakes else None

    return wait_until(probe, timeout=15, what=what)


def _subagent(lab: TmuxLab, subagents: Path, name: str, session: str) -> None:
    """A subagent whose log names its session and has no tool call open (it thinks)."""
    args = ["--format", "claude-code", "--session-id", session, "--steps", "2"]
    lab.subagent(subagents / name, [*args, "--step-delay", "600"])


def test_a_permission_prompt_wakes_with_the_tool_and_its_input_and_an_idle_prompt_does_not(
    lab: TmuxLab, subagents_dir: Path, tether_home: Path, conn: sqlite3.Connection, tmp_path: Path
) -> None:
    pane, recording = lab.orchestrator()
    _subagent(lab, subagents_dir, "mailer", "sub-mailer")
    dog = _watchdog(lab, subagents_dir, tether_home, conn)
    wait_until(lambda: dog.surveyor.look(conn, time.time()).running, what="the subagent to run")
    add_orchestrator(conn, Registration(tmux_pane=pane, tmux_socket=lab.socket))

    # the subagent's harness says it waits at a permission dialog: the wake
    # names the tool and the input the gate recorded (its log shows no call)
    asking = _recorded("PreToolUse", "PermissionRequest", "Notification.permission_prompt")
    _play("sub-mailer", [asking[0], asking[2]], tmp_path)  # PreToolUse, then the notification
    first = _next_wake(dog, "the first wake")
    assert first.reason == "confirmation" and first.pending_tool == "Bash"
    (line,) = wait_until(recording.lines, what="the wake in the orchestrator's input")
    assert (
        f") waits for confirmation of Bash {SHOWN_INPUT} (Notification permission_prompt, "
        in line["line"]
    )
    assert "Subagent mailer (pane %" in line["line"]

    # the call is approved, the turn ends, Claude Code says it waits for input:
    # no confirmation wait any more
    _play("sub-mailer", _recorded("PostToolUse", "Stop", "Notification.idle_prompt"), tmp_path)
    second = _next_wake(dog, "the second wake")
    assert second.reason == "input"
    wait_until(lambda: len(recording.lines()) == 2, what="the second wake's text")
    text = str(recording.lines()[1]["line"])
    assert ") waits for input (Notification idle_prompt, " in text
    assert "waits for confirmation" not in text
    assert [w.reason for w in list_wakes(conn)] == ["confirmation", "input"]
    dog.close()


def test_the_orchestrator_s_own_notifications_steer_the_wake(
    lab: TmuxLab, subagents_dir: Path, tether_home: Path, conn: sqlite3.Connection, tmp_path: Path
) -> None:
    pane, recording = lab.orchestrator()
    _subagent(lab, subagents_dir, "worker", "sub-worker")
    dog = _watchdog(lab, subagents_dir, tether_home, conn)
    wait_until(lambda: dog.surveyor.look(conn, time.time()).running, what="the subagent to run")
    add_orchestrator(conn, Registration(tmux_pane=pane, tmux_socket=lab.socket, sessions=("orch",)))

    # a tool call started and no stop came: the turn counts as open (busy) ...
    (pre, asked, idle) = _recorded(
        "PreToolUse", "Notification.permission_prompt", "Notification.idle_prompt"
    )
    _play("orch", [pre], tmp_path)
    busy = _decision(dog, lambda a: a.startswith("busy"), "the busy veto")
    assert busy.action == "busy (turn open since PreToolUse)"
    # ... until its own permission prompt: the human is told, nothing is typed ...
    _play("orch", [asked], tmp_path)
    told = _decision(dog, lambda a: a == "human-only", "a human-only wake")
    assert told.activity_source == "hook PreToolUse"
    assert [w.reason for w in list_wakes(conn)] == ["own-permission"]
    assert recording.lines() == []
    # ... and once it says it waits for input, the open turn no longer vetoes the wake
    _play("orch", [idle], tmp_path)
    _decision(dog, lambda a: a == "woken", "the wake")
    assert wait_until(recording.lines)[0]["line"].startswith("[tether watch] You have been idle")
    dog.close()


# --- Copilot's permissionRequest and Codex's PermissionRequest ------------------------

GOLDEN = SEQUENCE.parents[1]


def _golden(harness: str, event: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((GOLDEN / harness / f"{event}.payload.json").read_text())
    return data


def _codex_permission_request(pre: dict[str, Any]) -> dict[str, Any]:
    """Codex's PermissionRequest for the call ``pre`` started.

    No recording exists (``codex exec`` never asks); the fields are those of the
    input schema Codex 0.171.0 ships for this hook (``permission-request.command
    .input``): the PreToolUse fields without ``tool_use_id``.
    """
    keep = ("session_id", "turn_id", "transcript_path", "cwd", "model", "tool_name", "tool_input")
    return {
        **{key: pre[key] for key in keep},
        "hook_event_name": "PermissionRequest",
        "permission_mode": "default",
    }


def _asked(harness: str) -> tuple[str, list[tuple[dict[str, Any], str | None]]]:
    """(session id, [(payload, --event)]): a tool call starts and asks for permission."""
    if harness == "copilot":
        pre, asked = _golden("copilot", "preToolUse"), _golden("copilot", "permissionRequest")
        return str(asked["sessionId"]), [(pre, "preToolUse"), (asked, "permissionRequest")]
    pre = _golden("codex", "PreToolUse")
    return str(pre["session_id"]), [(pre, None), (_codex_permission_request(pre), None)]


def _hooks(harness: str, calls: list[tuple[dict[str, Any], str | None]], cwd: Path) -> None:
    for payload, event in calls:
        subprocess.run(
            [TETHER_GATE, "hook", "--harness", harness, *(["--event", event] if event else [])],
            input=json.dumps({**payload, "cwd": str(cwd)}),
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
            cwd=cwd,
        )


@pytest.mark.parametrize(
    ("harness", "tool", "signal", "call_id"),
    [
        # Copilot sends no call id: the gate makes one from the call's time, tool and input
        ("copilot", "bash", "permissionRequest", "call@"),
        ("codex", "Bash", "PermissionRequest", "call_mock_s1_c0_50af7f15"),
    ],
)
def test_copilot_and_codex_permission_requests_are_confirmation_waits(
    tether_home: Path,
    tmp_path: Path,
    harness: str,
    tool: str,
    signal: str,
    call_id: str,
) -> None:
    session, calls = _asked(harness)
    _hooks(harness, calls, tmp_path)
    wait = _wait_of(tether_home, session)
    assert wait is not None
    assert (wait.kind, wait.tool, wait.input, wait.signal) == (
        "confirmation",
        tool,
        '{"command": "echo step 1"}',
        signal,
    )
    assert call_id is not None and wait.call_id is not None
    if call_id == "call@":
        assert wait.call_id.startswith("call@") and f":{tool}:" in wait.call_id, wait.call_id
    else:
        assert wait.call_id == call_id


@pytest.mark.slow
@pytest.mark.parametrize("harness", ["copilot", "codex"])
def test_a_subagent_in_a_pane_waiting_on_its_permission_request_is_named_in_the_wake(
    lab: TmuxLab,
    subagents_dir: Path,
    tether_home: Path,
    conn: sqlite3.Connection,
    harness: str,
) -> None:
    """The hook events are the subagent's: Codex's stream names its session first thing
    (``thread.started``); Copilot's names it only at the end, so its events are found by
    the folder the subagent works in."""
    pane, recording = lab.orchestrator()
    folder = (subagents_dir / "mailer").resolve()
    session, calls = _asked(harness)
    named = ["--session-id", session] if harness == "codex" else []
    lab.subagent(folder, ["--format", harness, *named, "--steps", "2", "--step-delay", "600"])
    dog = _watchdog(lab, subagents_dir, tether_home, conn)
    wait_until(lambda: dog.surveyor.look(conn, time.time()).running, what="the subagent to run")
    add_orchestrator(conn, Registration(tmux_pane=pane, tmux_socket=lab.socket))
    _hooks(harness, calls, folder)
    wake = _next_wake(dog, "the wake")
    dog.close()
    tool = "bash" if harness == "copilot" else "Bash"
    assert (wake.reason, wake.pending_tool) == ("confirmation", tool)
    (line,) = wait_until(recording.lines, what="the wake in the orchestrator's input")
    signal = "permissionRequest" if harness == "copilot" else "PermissionRequest"
    assert (
        f"Subagent mailer (pane %1) waits for confirmation of {tool} "
        f'{{"command": "echo step 1"}} ({signal}, ' in line["line"]
    )


def test_a_folder_links_hook_events_only_when_it_is_one_subagent_s_since_it_started(
    lab: TmuxLab, subagents_dir: Path, tether_home: Path, conn: sqlite3.Connection
) -> None:
    folder = (subagents_dir / "shared").resolve()
    folder.mkdir()
    _, calls = _asked("copilot")
    _hooks("copilot", calls, folder)
    gate = sqlite3.connect(tether_home / "gate.db")
    with gate:  # an hour old: an earlier session in that folder, not the agent's
        gate.execute("UPDATE events SET at = at - 3600")
    gate.close()
    args = ["--format", "copilot", "--steps", "2", "--step-delay", "600"]
    lab.subagent(folder, args)
    dog = _watchdog(lab, subagents_dir, tether_home, conn)

    def states(count: int) -> list[str] | None:
        found = [v.state for v in dog.surveyor.look(conn, time.time()).subagents]
        return found if len(found) == count else None

    # (until its agent has started, the new pane is a subagent that has ended)
    wait_until(lambda: states(1) == ["working"], what="the subagent to work")
    # a second subagent in the same folder: whose events are these? neither is told
    lab.window(folder, ["bash", "-c", f"{shlex.join(agent_argv(*args))} > other.jsonl"])
    wait_until(lambda: states(2) == ["working", "working"], what="both subagents")
    _hooks("copilot", calls, folder)
    assert states(2) == ["working", "working"]
    dog.close()
