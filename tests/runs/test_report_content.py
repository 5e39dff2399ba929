"""The report's text parts, from a ledger folded from a real recording."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from tether.events.accounting import count
from tether.harnesses import get_harness
from tether.run_status import RunStatus
from tether.runs.budget import Budget
from tether.runs.report import ReportInput, build, render_markdown

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
    assert report["last_message"] == ledger.last_assistant_text
    text = render_markdown(report)
    quoted = [f"> {line}" for line in ledger.last_assistant_text.splitlines()]
    start = text.splitlines().index("## Agent's last message")
    assert text.splitlines()[start + 2 : start + 2 + len(quoted)] == quoted
    assert "- modified: `a.py`" in text and " a.py | 2 +-" in text
    assert "- `make check`: skipped: run stopped by iteration_limit" in text
    assert report["stop_reason_text"] and report["next_step"].startswith("Review this report")
