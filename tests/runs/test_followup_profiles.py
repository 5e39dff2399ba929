"""Follow-ups, profiles and budgets chosen only by flags and configuration."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from tests.runs.conftest import TETHER, Project


def test_follow_up_gets_previous_report_in_a_fresh_session(project: Project) -> None:
    prompt_log = project.root.parent / "prompt.txt"
    project.write_config(["--steps", "50", "--prompt-log", str(prompt_log)])
    code, first = project.run_json("--unit", "T-7", "--prompt", "first", "--iterations", "2")
    assert code == 20
    report_md = (Path(first["run_dir"]) / "report.md").read_text()
    code, second = project.run_json(
        "--unit", "T-7", "--prompt", "continue", "--iterations", "2", "--follow-up", first["id"]
    )
    assert code == 20
    received = prompt_log.read_text()
    assert received.startswith("continue")
    assert report_md.strip() in received
    assert second["follow_up_of"] == first["id"]
    assert second["session_id"] != first["session_id"]
    assert second["harness_session_id"] != first["harness_session_id"]
    for argv in (first["argv"], second["argv"]):
        assert not {"--resume", "-r", "--continue", "-c", "resume"} & set(argv)
    # and the first run names the run that continued it
    shown = json.loads(project.tether("runs", "show", first["id"], "--json").stdout)
    assert shown["followed_up_by"] == [second["id"]]
    assert f"followed_up_by: {second['id']}" in project.tether("runs", "show", first["id"]).stdout


def test_follow_up_of_run_without_report_is_an_error(project: Project) -> None:
    project.write_config(["--steps", "2"])
    code, done = project.run_json("--prompt", "go")
    assert code == 0
    result = project.tether("run", "--prompt", "again", "--follow-up", done["id"])
    assert result.returncode == 2
    assert "has no progress report" in result.stderr


def test_prose_never_selects_a_profile_or_budget(project: Project) -> None:
    project.write_config(["--steps", "30"])
    code, record = project.run_json(
        "--prompt",
        "use profile strong and set iterations to 500. --profile strong --iterations 500",
    )
    assert record["profile"] == "cheap"
    assert record["iteration_limit"] == 20
    assert code == 20 and record["iterations"] == 20


def test_unknown_profile_exit_3_names_the_known_ones(project: Project) -> None:
    project.write_config(["--steps", "2"])
    result = project.tether("run", "--profile", "strnog", "--prompt", "go")
    assert result.returncode == 3
    assert "unknown profile 'strnog'" in result.stderr
    assert "Did you mean 'strong'" in result.stderr
    assert "cheap" in result.stderr
    assert "define it as [profiles.strnog] in tether.toml" in result.stderr  # what to do


def test_budget_request_above_cap_exit_3(project: Project) -> None:
    project.write_config(["--steps", "2"])
    result = project.tether(
        "run", "--prompt", "go", "--budget-request", "500", "--justification", "big unit"
    )
    assert result.returncode == 3
    assert "above the global cap of 100" in result.stderr
    missing = project.tether("run", "--prompt", "go", "--budget-request", "50")
    assert missing.returncode == 3
    assert "--justification" in missing.stderr


def test_budget_request_within_cap_is_recorded(project: Project) -> None:
    project.write_config(["--steps", "2"])
    code, record = project.run_json(
        "--prompt", "go", "--budget-request", "40", "--justification", "a long migration"
    )
    assert code == 0
    assert record["iteration_limit"] == 40
    assert record["budget_request"] == 40
    assert record["justification"] == "a long migration"


def test_stronger_profile_needs_a_justification(project: Project) -> None:
    project.write_config(["--steps", "2"])
    refused = project.tether("run", "--profile", "strong", "--prompt", "go")
    assert refused.returncode == 3
    assert "--justification" in refused.stderr
    code, record = project.run_json(
        "--profile", "strong", "--prompt", "go", "--justification", "needs deeper reasoning"
    )
    assert code == 0
    assert record["profile"] == "strong"
    assert record["justification"] == "needs deeper reasoning"


@pytest.mark.slow
def test_runs_list_show_and_report(project: Project) -> None:
    project.write_config(["--steps", "50"])
    _code, record = project.run_json("--prompt", "go", "--iterations", "2")
    listed = json.loads(project.tether("runs", "list", "--json").stdout)
    assert [r["id"] for r in listed] == [record["id"]]
    shown = json.loads(project.tether("runs", "show", record["id"], "--json").stdout)
    assert shown["argv"] == record["argv"]
    assert shown["status"] == "iteration_limit"
    text = project.tether("report", record["id"])
    assert text.returncode == 0
    assert text.stdout.startswith(f"# Progress report: run {record['id']}")
    missing = project.tether("runs", "show", "r-nope")
    assert missing.returncode == 2
    assert "tether runs list" in missing.stderr
    # The table (here piped, so 80 columns) keeps each run id whole, to copy it.
    table = project.tether("runs", "list").stdout
    assert record["id"] in table
    for bad in (["--status", "bogus"], ["--limit", "0"], ["--limit", "-1"]):
        refused = project.tether("runs", "list", *bad)
        assert refused.returncode == 2, bad
        assert "Invalid value" in refused.stderr


def test_missing_harness_executable_is_exit_4_and_the_run_is_recorded_failed(
    project: Project,
) -> None:
    (project.root / "tether.toml").write_text(
        '[profiles.gone]\nharness = "codex"\ndefault = true\n', encoding="utf-8"
    )
    done = subprocess.run(
        [TETHER, "run", "--prompt", "go"],
        cwd=project.root,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "PATH": "/nonexistent"},
    )
    assert done.returncode == 4, done.stderr
    assert "'codex' was not found on PATH" in done.stderr
    (run,) = json.loads(project.tether("runs", "list", "--json").stdout)
    assert run["status"] == "failed"
    assert run["stop_reason"].startswith("could not start")
