"""A call the gate refuses ends the run at once, as ``tool_call_limit``, in every format.

Here the gate's budget (``gate_budget``) is smaller than any limit the
supervisor counts from the stream, so only the gate knows that call 4 is one
too many. The run must end right there (exit 21) with a report that names the
refused call, never run on until some other limit (Codex leaves a refused call
out of its stream entirely, so waiting for the stream would burn model calls).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.runs.conftest import Project


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["claude-code", "codex", "copilot", "pi"])
def test_a_refused_call_ends_the_run_with_the_tool_call_limit(project: Project, fmt: str) -> None:
    project.write_config(["--steps", "30", "--step-delay", "0.02"], extra="")
    toml = (project.root / "tether.toml").read_text()
    toml = toml.replace('"--format", "claude-code"', f'"--format", "{fmt}"')
    (project.root / "tether.toml").write_text("gate_budget = 3\n" + toml)
    code, record = project.run_json("--prompt", "go", "--iterations", "25")
    assert code == 21, record
    assert record["status"] == "tool_call_limit"
    executed = project.executed()
    assert len(executed) == 3, executed  # call 4 was refused, not run
    report = json.loads(Path(record["run_dir"], "report.json").read_text())
    refused = report["refused_call"]
    assert refused["number"] == 4 and refused["budget"] == 3, refused
    assert refused["executed"] is False
    assert "step 4" in refused["call"], refused
    assert "refused call:" in Path(record["run_dir"], "report.md").read_text()
    # the run ended at the refusal, not 20 model steps later
    assert record["iterations"] <= 5, record
