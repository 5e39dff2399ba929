"""The report's text parts, from a ledger folded from a real recording."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tether.events.accounting import Ledger, apply, count
from tether.gate.runstop import PAST_ITERATION_LIMIT, Refusal
from tether.harnesses import get_harness
from tether.run_status import RunStatus
from tether.runs.budget import Budget
from tether.runs.run_report import ReportInput, build, render_markdown

TRANSCRIPTS = Path(__file__).resolve().parents[1] / "transcripts"


def test_the_agents_last_words_and_open_calls_reach_the_report() -> None:
    # A real Claude Code stream, folded as the supervisor folds it.
    lines = (TRANSCRIPTS / "claude-code" / "five-steps.jsonl").read_bytes().splitlines()
    adapter = get_harness("claude-code")
    ledger = count(event for line in lines for event in adapter.parse_line(line))
    assert ledger.last_assistant_text  # the recording ends with the model's summary
    report = build(
        ReportInput(
            run_id="r-1",
            unit="T-1",
            profile="cheap",
            harness="claude-code",
            stop=RunStatus.ITERATION_LIMIT,
            budget=Budget(iterations=5, tool_calls=None, timeout_seconds=60.0),
            ledger=ledger,
            seconds=1.5,
            files_changed=[{"path": "a.py", "change": "modified"}],
            worktree_kind="git",
            diff_stat=" a.py | 2 +-",
            skipped_stages=[["make", "check"]],
            session_id="s-1",
            ended_at=datetime(2026, 11, 30, tzinfo=UTC),
            host="box",
        )
    )
    assert report.last_message == ledger.last_assistant_text
    text = render_markdown(report)
    quoted = [f"> {line}" for line in ledger.last_assistant_text.splitlines()]
    start = text.splitlines().index("## Agent's last message")
    assert text.splitlines()[start + 2 : start + 2 + len(quoted)] == quoted
    assert "- modified: `a.py`" in text and " a.py | 2 +-" in text
    assert "- `make check`: skipped: run stopped by iteration_limit" in text
    assert report.stop_reason_text and report.next_step.startswith("Review this report")


def _input(stop: RunStatus, ledger: Ledger, **kw: Any) -> ReportInput:
    return ReportInput(
        run_id="r-1",
        unit=None,
        profile="cheap",
        harness="copilot",
        stop=stop,
        budget=Budget(iterations=3, tool_calls=2, timeout_seconds=60.0),
        ledger=ledger,
        seconds=1.0,
        files_changed=[],
        worktree_kind="git",
        diff_stat=None,
        skipped_stages=[],
        session_id="s-1",
        ended_at=datetime(2026, 11, 30, tzinfo=UTC),
        host="box",
        **kw,
    )


def test_a_call_the_stream_showed_is_never_said_to_be_refused_by_the_gate() -> None:
    # A real Copilot stream cut at its third tool call: the stop came from the stream.
    lines = (TRANSCRIPTS / "copilot" / "five-steps.jsonl").read_bytes().splitlines()
    adapter = get_harness("copilot")
    ledger = Ledger()
    for line in lines:
        for event in adapter.parse_line(line):
            apply(ledger, event)
            if ledger.tool_calls == 3:
                break
        if ledger.tool_calls == 3:
            break
    assert ledger.open_calls
    for gated in (True, False):
        report = build(_input(RunStatus.TOOL_CALL_LIMIT, ledger, gated=gated))
        refused = report.refused_call
        assert refused is not None
        assert refused.stopped_by == "stream"
        text = render_markdown(report)
        assert "refused by the gate" not in text
        assert "stopped when it appeared in the stream" in text
        assert refused.executed is (False if gated else None)


def test_a_model_request_announced_after_the_stop_is_in_flight() -> None:
    ledger = Ledger(iterations=3, model_requests=3, requests_after_stop=1)
    report = build(_input(RunStatus.ITERATION_LIMIT, ledger))
    assert report.in_flight is not None
    assert report.in_flight.model_steps_past_limit == 1
    assert report.in_flight.after_stop == 1
    assert "- in flight at the stop: 1 model step(s) past the limit of 3" in render_markdown(report)
    quiet = build(_input(RunStatus.ITERATION_LIMIT, Ledger(iterations=3, model_requests=3)))
    assert quiet.in_flight is None


def test_a_call_the_gate_refused_for_the_iteration_limit_is_named_by_its_step() -> None:
    refusal = Refusal(
        {
            "tool": "Bash",
            "tool_use_id": "call_4",
            "input": '{"command": "touch tick-4.done"}',
            "harness": "codex",
            "calls_used": 4,
            "call_budget": 60,
            "reason": PAST_ITERATION_LIMIT,
            "step": 4,
            "iteration_budget": 3,
        }
    )
    ledger = Ledger(iterations=4)
    report = build(_input(RunStatus.ITERATION_LIMIT, ledger, refused_call=refusal, gated=True))
    refused = report.refused_call
    assert refused is not None and (refused.past_step, refused.stopped_by) == (4, "gate")
    text = render_markdown(report)
    assert "(a call of model step 4, past the iteration limit of 3; refused by the gate" in text
