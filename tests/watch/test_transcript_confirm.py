"""An open tool call at the end of a log, and what a subagent waits on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.watch.watch_support import gate_event

from tether.gate.eventlog import GateEvent, GateReader
from tether.watch.confirm import Wait, from_gate, wait_state
from tether.watch.subagents import Subagent
from tether.watch.transcript import OpenCall, TranscriptReader
from tether.watch.wake import SubagentView, compose

TRANSCRIPTS = Path(__file__).resolve().parents[1] / "transcripts"
HARNESSES = ["claude-code", "codex", "copilot", "pi"]
# (file, first tool call's id, its tool name) as the real CLIs recorded them
FIRST_CALL = {
    ("claude-code", "jsonl"): ("toolu_mock_s1_c0_7f275676", "Bash"),
    ("claude-code", "session.jsonl"): ("toolu_mock_s1_c0_7f275676", "Bash"),
    ("codex", "jsonl"): ("item_1", "command_execution"),
    ("codex", "session.jsonl"): ("call_mock_s1_c0_3e4760c9", "exec_command"),
    ("copilot", "jsonl"): ("call_mock_s1_c0_77e351a8", "bash"),
    ("copilot", "session.jsonl"): ("call_mock_s1_c0_77e351a8", "bash"),
    ("pi", "jsonl"): ("call_mock_s1_c0_f9e37115", "bash"),
    ("pi", "session.jsonl"): ("call_mock_s1_c0_f9e37115", "bash"),
    # Vibe's stream shows a call only once finished; its journal opens it (action id)
    ("vibe", "session.jsonl"): ("050205e1-ebc8-5d61-9ded-9f21503b3698", "file_system.bash"),
}


def _states(src: Path, tmp: Path) -> list[tuple[int, str | None]]:
    """The open call after each prefix of the recording (as if the agent stopped there)."""
    lines = src.read_bytes().splitlines(keepends=True)
    reader = TranscriptReader()
    out: list[tuple[int, str | None]] = []
    target = tmp / src.name
    for count in range(1, len(lines) + 1):
        target.write_bytes(b"".join(lines[:count]))
        state = reader.read(target)
        assert state is not None
        out.append((count, state.open_call.call_id if state.open_call else None))
    return out


@pytest.mark.parametrize(("harness", "kind"), sorted(FIRST_CALL))
def test_a_recording_cut_after_a_tool_call_has_that_call_open(
    harness: str, kind: str, tmp_path: Path
) -> None:
    src = TRANSCRIPTS / harness / f"five-steps.{kind}"
    call_id, tool = FIRST_CALL[(harness, kind)]
    states = _states(src, tmp_path)
    first_open = next(i for i, open_id in states if open_id is not None)
    assert states[first_open - 1][1] == call_id
    # the whole recording ends with every call answered
    assert states[-1][1] is None
    cut = tmp_path / f"cut.{kind}"
    cut.write_bytes(b"".join(src.read_bytes().splitlines(keepends=True)[:first_open]))
    state = TranscriptReader().read(cut)
    assert state is not None and state.open_call is not None
    assert state.open_call.tool == tool
    assert "echo step 1" in state.open_call.input


@pytest.mark.parametrize("harness", [*HARNESSES, "vibe"])
def test_session_ids_are_read_from_the_log(harness: str) -> None:
    expected = {
        "claude-code": "0d9e0eb5-eefd-4768-85af-f044cdcfaec2",
        "codex": "01a22a83-aea5-7dc0-8696-8660b8377ba8",
        "copilot": "85ae654a-4f28-487d-bd8f-348fcad23f6f",
        "pi": "01a22a84-60f1-7324-8105-002884957e78",
        "vibe": "87f129c6-4397-c222-bf29-f9317a110fe7",
    }[harness]
    state = TranscriptReader().read(TRANSCRIPTS / harness / "five-steps.session.jsonl")
    assert state is not None
    assert expected in state.session_ids


def test_a_run_end_closes_what_was_open_and_noise_is_skipped(tmp_path: Path) -> None:
    log = tmp_path / "x.jsonl"
    call = {
        "type": "assistant",
        "message": {
            "content": [
                {
                    "type": "tool_use",
                    "id": "t1",
                    "name": "Bash",
                    "input": {"command": "rm -rf build"},
                }
            ]
        },
    }
    log.write_text(json.dumps(call) + '\nnot json at all\n{"type": "strange"}\n')
    reader = TranscriptReader()
    state = reader.read(log)
    assert state is not None and state.open_call is not None
    assert (state.open_call.call_id, state.open_call.tool) == ("t1", "Bash")
    assert state.open_call.input == '{"command": "rm -rf build"}'
    assert reader.read(log) is state  # unchanged file: the cached answer
    with log.open("a") as handle:
        handle.write(json.dumps({"type": "result", "subtype": "error_during_execution"}) + "\n")
    state = reader.read(log)
    assert state is not None and state.open_call is None


def test_only_the_tail_is_read(tmp_path: Path) -> None:
    log = tmp_path / "big.jsonl"
    filler = json.dumps({"type": "noise", "pad": "x" * 1000}) + "\n"
    call = {"type": "tool_execution_start", "toolCallId": "c9", "toolName": "edit", "args": {}}
    log.write_text(filler * 2000 + json.dumps(call) + "\n")
    state = TranscriptReader(tail_bytes=64 * 1024).read(log)
    assert state is not None and state.open_call is not None
    assert state.open_call.call_id == "c9"


def _event(at: float, event: str, tool: str | None = None, use: str | None = None) -> GateEvent:
    return GateEvent(at, "s1", "claude-code", event, tool, use)


def test_harness_signals_read_newest_first() -> None:
    permission = from_gate(
        [_event(9, "PermissionRequest", "Bash", "u1"), _event(8, "PreToolUse", "Bash", "u1")]
    )
    assert permission == Wait("confirmation", "Bash", "", "u1", 9, "PermissionRequest")
    # a Notification right after a tool call started: the permission prompt
    notified = from_gate([_event(9, "Notification"), _event(8, "PreToolUse", "Write", "u2")])
    assert notified is not None and (notified.kind, notified.tool) == ("confirmation", "Write")
    # a Notification after the turn stopped: it waits for input
    idle = from_gate([_event(9, "Notification"), _event(8, "Stop")])
    assert idle is not None and idle.kind == "input"
    assert from_gate([_event(9, "PostToolUse", "Bash", "u1")]) is None
    assert from_gate([]) is None


def test_the_log_answers_after_confirm_after_seconds() -> None:
    call = OpenCall("c1", "Bash", '{"command": "make"}', since=100.0)
    assert wait_state(call, [], now=102.0, confirm_after=5.0) == Wait(
        "tool", "Bash", '{"command": "make"}', "c1", 100.0, "log"
    )
    waiting = wait_state(call, [], now=106.0, confirm_after=5.0)
    assert waiting is not None and waiting.kind == "confirmation"
    text = waiting.describe(now=112.0)
    assert text == 'waits for confirmation: Bash {"command": "make"} has had no result for 12 s'
    # an explicit harness signal wins at once, and the log adds the input
    signalled = wait_state(call, [_event(101, "PermissionRequest", "Bash", "c1")], 101.5, 5.0)
    assert signalled is not None
    assert signalled.describe(now=103.0) == (
        'waits for confirmation of Bash {"command": "make"} (PermissionRequest, 2 s)'
    )


def test_gate_reader_sees_real_hook_events(tether_home: Path, tmp_path: Path) -> None:
    reader = GateReader(tether_home)
    assert reader.recent(["sub-1"]) == []  # no gate.db yet: no events, no error
    gate_event(
        "sub-1",
        "PreToolUse",
        tmp_path,
        tool_name="Bash",
        tool_use_id="u7",
        tool_input={"command": "rm -rf /tmp/x"},
    )
    gate_event(
        "sub-1",
        "PermissionRequest",
        tmp_path,
        tool_name="Bash",
        tool_input={"command": "rm -rf /tmp/x"},
    )
    gate_event("other", "Stop", tmp_path)
    events = reader.recent(["sub-1"])
    assert [e.event for e in events] == ["PermissionRequest", "PreToolUse"]
    wait = from_gate(events)
    assert wait is not None
    assert (wait.kind, wait.tool, wait.call_id) == ("confirmation", "Bash", "u7")
    assert set(reader.sessions_since(0)) == {"sub-1", "other"}
    reader.close()


def test_the_wake_message_names_the_longest_waits_and_counts_the_rest() -> None:
    def view(n: int, since: float | None) -> SubagentView:
        sub = Subagent(key=f"pane:%{n}", kind="pane", label=f"s{n} (pane %{n})", running=True)
        wait = (
            None
            if since is None
            else Wait("confirmation", "Bash", f'{{"command": "job {n}"}}', f"c{n}", since, "log")
        )
        return SubagentView(sub, wait)

    running = [view(n, 100.0 - n) for n in range(12)] + [view(90, None), view(91, None)]
    text = compose(running, idle_seconds=61.4, now=110.0, max_chars=600)
    assert len(text) <= 600 and "\n" not in text
    assert text.startswith(
        "[tether watch] You have been idle for 61 s while 14 subagents run. "
        "Subagent s11 (pane %11) waits for confirmation: Bash "
        '{"command": "job 11"} has had no result for 21 s.'
    )
    shown = text.count("waits for confirmation")
    assert 1 < shown < 12
    assert (
        f"{12 - shown} more subagent(s) wait too. Still working: s90 (pane %90), "
        "s91 (pane %91)." in text
    )
    assert text.endswith("keep watching until they finish.")


def test_a_vibe_effect_still_running_is_open_and_a_settled_one_closes_it(tmp_path: Path) -> None:
    lines = (TRANSCRIPTS / "vibe" / "five-steps.jsonl").read_bytes().splitlines()
    effect = json.loads(lines[1])
    running = {**effect, "generationStatus": "in_progress"}
    del running["state"]
    log = tmp_path / "vibe.jsonl"
    log.write_bytes(lines[0] + b"\n" + json.dumps(running).encode() + b"\n")
    state = TranscriptReader().read(log)
    assert state is not None and state.open_call is not None
    assert state.open_call.call_id == effect["id"].removeprefix("effect-")
    assert state.open_call.tool == "file_system.bash"
    assert "echo step 1" in state.open_call.input
    log.write_bytes(log.read_bytes() + lines[1] + b"\n")
    closed = TranscriptReader().read(log)
    assert closed is not None and closed.open_call is None


def test_a_vibe_pane_reads_the_journal_of_the_newest_session_in_its_folder(
    tmp_path: Path,
) -> None:
    import os

    from tether.watch.subagents import _vibe_journal

    sessions = tmp_path / "unified"
    for n, (sid, cwd) in enumerate([("old", "/w"), ("other", "/elsewhere"), ("new", "/w")]):
        (sessions / sid / "journal").mkdir(parents=True)
        meta = sessions / sid / "meta.json"
        meta.write_text(json.dumps({"session_id": sid, "environment": {"working_directory": cwd}}))
        os.utime(meta, (1000 + n, 1000 + n))
    assert _vibe_journal(sessions, "/w") == sessions / "new" / "journal"
    assert _vibe_journal(sessions, "/elsewhere") == sessions / "other" / "journal"
    assert _vibe_journal(sessions, "/nowhere") is None
    assert _vibe_journal(tmp_path / "missing", "/w") is None


def test_a_vibe_run_is_watched_through_its_session_journal(tmp_path: Path) -> None:
    from tether.watch.subagents import run_log

    run_dir = tmp_path / "runs" / "r1"
    user_logs = tmp_path / "vibe" / "logs"
    journal = user_logs / "session" / "unified" / "s-1" / "journal"
    journal.mkdir(parents=True)
    (journal / "0000000000000001.jsonl").write_text("")
    (run_dir / "vibe-home").mkdir(parents=True)
    (run_dir / "vibe-home" / "logs").symlink_to(user_logs)
    found = run_log("vibe", run_dir, "s-1")
    assert found.resolve() == (journal / "0000000000000001.jsonl").resolve()
    # before the stream named the session, and for the other harnesses: the stream
    assert run_log("vibe", run_dir, None) == run_dir / "events.jsonl"
    assert run_log("vibe", run_dir, "s-2") == run_dir / "events.jsonl"
    assert run_log("codex", run_dir, "s-1") == run_dir / "events.jsonl"
