"""Every run that did not complete leaves a progress report, so it can be followed up."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

from tests.runs.conftest import TETHER, Project, poll


def test_a_failed_run_has_a_report_and_can_be_followed_up(project: Project) -> None:
    project.write_config(["--steps", "3", "--fail"])
    code, record = project.run_json("--prompt", "go")
    assert code == 23, record
    assert record["status"] == "failed"
    report = json.loads(Path(record["run_dir"], "report.json").read_text())
    assert report["stop_reason"] == "failed"
    assert report["tool_calls"]["used"] == 2
    project.write_config(["--steps", "2"])
    code, follow = project.run_json("--prompt", "go on", "--follow-up", record["id"])
    assert code == 0, follow
    assert follow["follow_up_of"] == record["id"]


def test_a_hung_up_run_is_cancelled_with_a_report(project: Project) -> None:
    project.write_config(["--steps", "500", "--step-delay", "0.05"])
    proc = subprocess.Popen(
        [TETHER, "run", "--json", "--prompt", "go", "--iterations", "90"],
        cwd=project.root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert poll(lambda: len(project.executed()) >= 2, timeout=30)
    proc.send_signal(signal.SIGHUP)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 24, err
    record = json.loads(out)
    assert record["status"] == "cancelled"
    report = json.loads(Path(record["run_dir"], "report.json").read_text())
    assert report["stop_reason"] == "cancelled"
    assert report["tool_calls"]["used"] >= 2
