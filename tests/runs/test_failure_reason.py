"""A failed run says why: the harness's stderr reaches the report, the record and the summary.

The scripted agent ends with exit 1 and, as Vibe does without its key, says
why only on stderr.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.runs.conftest import Project

WHY = "Missing MISTRAL_API_KEY environment variable for provider mistral"


def test_a_failed_run_carries_the_last_lines_of_the_harness_stderr(project: Project) -> None:
    noise = "starting up\\nloading config"
    project.write_config(["--steps", "1", "--exit-code", "1", "--stderr", f"{noise}\n{WHY}\nbye"])
    done = project.tether("run", "--prompt", "go")
    assert done.returncode == 23, done.stdout + done.stderr
    summary = done.stdout.splitlines()[0]
    assert summary.startswith("run r-") and f": failed: {WHY} (exit 1) — " in summary, summary

    code, record = project.run_json("--prompt", "go")
    assert code == 23
    assert record["stop_reason"] == f"failed: {WHY}"
    run_dir = Path(record["run_dir"])
    report = json.loads((run_dir / "report.json").read_text(encoding="utf-8"))
    assert report["stop_reason_text"] == f"the harness reported a failure: {WHY} (exit 1)"
    failure = report["failure"]
    assert failure["reason"] == WHY and failure["exit_status"] == 1
    assert failure["stderr_tail"][-2:] == [WHY, "bye"]
    assert failure["stderr"] == str(run_dir / "stderr.log")
    text = (run_dir / "report.md").read_text(encoding="utf-8")
    assert f"- stopped: the harness reported a failure: {WHY} (exit 1)" in text
    assert f"## The harness's stderr (last lines of {run_dir / 'stderr.log'})" in text
    assert f"    {WHY}\n    bye\n" in text


def test_a_harness_error_event_is_the_reason(project: Project) -> None:
    project.write_config(["--steps", "2", "--fail"])
    code, record = project.run_json("--prompt", "go")
    assert code == 23
    report = record["report"]
    assert report["failure"]["reason"], report  # the stream's own error message
    assert record["stop_reason"] == f"failed: {report['failure']['reason']}"


def test_a_completed_run_has_no_failure(project: Project) -> None:
    project.write_config(["--steps", "2", "--stderr", "warning: something harmless"])
    code, record = project.run_json("--prompt", "go")
    assert code == 0 and record["stop_reason"] == "completed"
