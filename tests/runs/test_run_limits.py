"""Hard budgets on real scripted-agent processes."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from tests.runs.conftest import Project


def _steps(lines: list[str]) -> list[int]:
    return [int(line.split()[1]) for line in lines]


def _head(root: Path) -> str:
    return subprocess.run(
        ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()


@pytest.mark.slow
def test_iteration_limit_stops_exactly_and_reports(project: Project) -> None:
    project.write_config(["--steps", "50"])
    head = _head(project.root)
    code, record = project.run_json(
        "--unit", "T-1", "--prompt", "Do the fifty steps.", "--iterations", "20"
    )
    assert code == 20
    assert record["status"] == "iteration_limit"
    assert record["iterations"] == 20
    executed = _steps(project.executed())
    assert executed == list(range(1, 21)), "exactly the tool calls of steps 1..20 ran"
    report = record["report"]
    assert report["stop_reason"] == "iteration_limit"
    assert report["iterations"] == {"used": 20, "limit": 20}
    assert report["tool_calls"]["used"] == 20
    assert report["unit"] == "T-1"
    assert report["seconds"]["used"] > 0
    assert {"path": "exec.log", "change": "untracked"} in report["files_changed"]
    assert report["worktree_left_as_is"] is True
    assert report["next_step"].startswith("Review this report")
    assert report["last_message"] is None or isinstance(report["last_message"], str)
    assert report["session_line"].startswith(f"session: {record['harness_session_id']} | scripted@")
    run_dir = Path(record["run_dir"])
    md = (run_dir / "report.md").read_text()
    assert md.rstrip().splitlines()[-1] == report["session_line"]
    assert "no reset, no stash, no commit" in md
    assert json.loads((run_dir / "report.json").read_text()) == report
    # the work tree is left exactly as it is: nothing committed, the agent's file still there
    assert _head(project.root) == head
    assert (project.root / "exec.log").exists()
    # the raw stream and the prompt are kept
    assert (run_dir / "events.jsonl").stat().st_size > 0
    assert (run_dir / "prompt.md").read_text() == "Do the fifty steps."


def test_tool_call_limit_refuses_the_call_beyond_it(project: Project) -> None:
    project.write_config(["--steps", "50"])
    code, record = project.run_json("--prompt", "go", "--tool-calls", "5")
    assert code == 21
    assert record["status"] == "tool_call_limit"
    assert len(project.executed()) == 5
    assert record["report"]["tool_calls"]["limit"] == 5


def test_completed_run_exit_zero_and_counts(project: Project) -> None:
    project.write_config(["--steps", "5"])
    code, record = project.run_json("--prompt", "go")
    assert code == 0
    assert record["status"] == "completed"
    assert (record["iterations"], record["tool_calls"], record["tool_results"]) == (5, 4, 4)
    assert record["report"] is None
    assert record["harness_session_id"] == record["session_id"]


def test_agent_ignoring_sigterm_is_killed_and_report_still_written(project: Project) -> None:
    project.write_config(["--steps", "50", "--ignore-sigterm", "--hang-before-result", "2"])
    code, record = project.run_json("--prompt", "go", "--timeout", "2")
    assert code == 22
    assert record["status"] == "timeout"
    assert "sigkill" in record["stop_reason"]
    report = record["report"]
    assert report["stop_reason"] == "timeout"
    assert report["open_points_source"] == "unfinished tool calls"
    assert report["open_points"] and "echo step 2" in report["open_points"][0]


def test_silent_hanging_agent_is_stopped_by_timeout(project: Project) -> None:
    project.write_config(["--silent"])
    code, record = project.run_json("--prompt", "go", "--timeout", "1")
    assert code == 22
    assert record["iterations"] == 0
    assert record["report"]["session_line"].startswith("session: ")


def test_harness_failure_is_exit_23(project: Project) -> None:
    project.write_config(["--steps", "3", "--fail"])
    code, record = project.run_json("--prompt", "go")
    assert code == 23
    assert record["status"] == "failed"


def test_todo_list_becomes_open_points(project: Project) -> None:
    project.write_config(["--steps", "10", "--todo"])
    code, record = project.run_json("--prompt", "go", "--iterations", "3")
    assert code == 20
    report = record["report"]
    assert report["open_points_source"] == "agent plan"
    assert len(report["open_points"]) == 2


def test_codex_format_counts_from_its_rollout_and_stops_at_the_limit(
    project: Project, tmp_path: Path
) -> None:
    codex_home = tmp_path / "codex-home"
    project.write_config(["--steps", "50", "--step-delay", "0.05"])
    toml = (
        (project.root / "tether.toml")
        .read_text()
        .replace('"claude-code"', '"codex"', 1)
        .replace(
            "default = true\n", f'default = true\nenv = {{ CODEX_HOME = "{codex_home}" }}\n', 1
        )
    )
    (project.root / "tether.toml").write_text(toml)
    code, record = project.run_json("--prompt", "go", "--iterations", "5")
    assert code == 20
    # The scripted harness takes the run's hooks in every format: its
    # PostToolBatch hook ends it after step 5, before the stream shows step 6.
    assert _steps(project.executed()) == [1, 2, 3, 4, 5]
    assert record["iterations"] == 5
    assert record["report"]["iterations_exact"] is True
    assert list(codex_home.glob("sessions/*/*/*/rollout-*.jsonl"))


def test_limit_check_falls_back_to_the_stream_bound() -> None:
    from tether.events.accounting import Ledger, apply
    from tether.events.model import AssistantText, ToolCallStarted
    from tether.run_status import RunStatus
    from tether.runs.budget import Budget, LimitCheck

    check = LimitCheck(Budget(iterations=2, tool_calls=None, timeout_seconds=60), "codex")
    ledger = Ledger()
    events = [
        ToolCallStarted(call_id="a", name="x"),
        ToolCallStarted(call_id="b", name="x"),
        AssistantText(text="done"),
    ]
    verdicts = [check.after(e, apply(ledger, e)) for e in events]
    assert verdicts == [None, None, None], "exact count (0 from the session file) governs"
    check.switch_to_stream_bound()
    assert check.after(events[-1], ledger) is RunStatus.ITERATION_LIMIT


@pytest.mark.slow  # waits out a 2 s --timeout; the kill itself stays quick (the test above)
def test_sigterm_ignoring_agent_at_the_iteration_limit_is_killed(project: Project) -> None:
    # It hangs inside step 3 (no hook answer ends it), so only signals can end
    # it at the timeout; it shrugs off SIGTERM.
    project.write_config(["--steps", "50", "--ignore-sigterm", "--hang-before-result", "3"])
    toml = (project.root / "tether.toml").read_text().replace('"claude-code"', '"pi"', 1)
    (project.root / "tether.toml").write_text(toml)
    code, record = project.run_json("--prompt", "go", "--iterations", "20", "--timeout", "2")
    assert code == 22
    assert record["stop_reason"] == "timeout (sigkill)"
    assert record["report"]["stop_reason"] == "timeout"
    assert Path(record["run_dir"], "report.md").exists()
    assert _steps(project.executed()) == [1, 2]


@pytest.mark.slow
def test_sigterm_ignoring_agent_with_hooks_still_runs_exactly_the_budget(
    project: Project,
) -> None:
    project.write_config(["--steps", "50", "--ignore-sigterm"])
    code, record = project.run_json("--prompt", "go", "--iterations", "20")
    assert code == 20
    # the session is locked before the signals: its own hook refuses every later call
    assert _steps(project.executed()) == list(range(1, 21))
    assert record["report"]["iterations"] == {"used": 20, "limit": 20}
    # the stop says what it stops for, where the gate reads it (gate/runstop.py)
    assert Path(record["run_dir"], "stopping").read_text() == "iteration_limit"


def test_a_call_refused_after_the_stop_names_the_stop_not_the_budget(project: Project) -> None:
    # In Copilot's format the supervisor stops the run at step 3's last result and
    # locks the session; an agent that shrugs off SIGTERM then asks for step 4's
    # call, which its own hook refuses, unless the SIGKILL comes first.
    project.write_config(["--steps", "50", "--ignore-sigterm"])
    toml = (project.root / "tether.toml").read_text()
    (project.root / "tether.toml").write_text(toml.replace('"claude-code"', '"copilot"', 1))
    code, record = project.run_json("--prompt", "go", "--iterations", "3")
    assert (code, record["status"]) == (20, "iteration_limit")
    assert _steps(project.executed()) == [1, 2, 3]
    assert Path(record["run_dir"], "stopping").read_text() == "iteration_limit"
    refused = record["report"]["refused_call"]
    if refused is not None:  # the race the refusal is about
        assert (refused["reason"], refused["stopping_for"]) == ("run stopping", "iteration_limit")
        md = Path(record["run_dir"], "report.md").read_text()
        assert "made while the run was being stopped: it had reached its iteration limit" in md
