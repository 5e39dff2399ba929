"""Token, cost and output budgets: each stops the run with its own exit code and a report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.runs.conftest import Project


def test_the_token_limit_stops_at_the_first_event_that_crosses_it(project: Project) -> None:
    # The scripted Claude Code stream reports 12400 + 80*K input tokens and 1 output
    # token for step K: steps 1-3 use 37683 tokens, step 4 crosses 40000.
    project.write_config(["--steps", "30", "--step-delay", "0.02"])
    code, record = project.run_json("--prompt", "go", "--tokens", "40000")
    assert code == 25, record
    assert record["status"] == "token_limit"
    report = record["report"]
    assert report["tokens"]["limit"] == 40000
    assert report["tokens"]["used"] == 50404  # the crossing event is the last counted
    assert len(project.executed()) <= 4
    assert (
        "tokens (input + output): 50404 of 40000"
        in Path(record["run_dir"], "report.md").read_text()
    )


def test_a_profile_token_limit_above_the_global_cap_is_a_config_error(project: Project) -> None:
    project.write_config(["--steps", "3"], extra="")
    toml = (project.root / "tether.toml").read_text()
    (project.root / "tether.toml").write_text("max_tokens_cap = 1000\n" + toml)
    done = project.tether("run", "--prompt", "go", "--tokens", "5000")
    assert done.returncode == 3, done.stderr
    assert "above the global cap of 1000 (max_tokens_cap)" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_a_cost_limit_where_the_harness_reports_no_cost_is_a_config_error(
    project: Project,
) -> None:
    project.write_config(["--steps", "3"])
    toml = (project.root / "tether.toml").read_text()
    toml += '\n[profiles.codex]\nharness = "codex"\n'
    (project.root / "tether.toml").write_text(toml)
    done = project.tether("run", "--profile", "codex", "--prompt", "go", "--cost", "0.5")
    assert done.returncode == 3, done.stderr
    assert "reports none" in done.stderr and "--tokens" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def _run_capped_at_20000(project: Project, agent_args: list[str]) -> tuple[Path, Path]:
    """A run with events.jsonl capped at 20,000 bytes that must end as output_limit:
    its events.jsonl and its report.json."""
    project.write_config(agent_args)
    toml = (project.root / "tether.toml").read_text()
    (project.root / "tether.toml").write_text("events_max_bytes = 20000\n" + toml)
    code, record = project.run_json("--prompt", "go", "--iterations", "100")
    assert code == 27, record
    assert record["status"] == "output_limit"
    return Path(record["run_dir"], "events.jsonl"), Path(record["run_dir"], "report.json")


@pytest.mark.slow
def test_events_jsonl_never_grows_past_its_cap(project: Project) -> None:
    events, report = _run_capped_at_20000(project, ["--steps", "200"])
    assert 0 < events.stat().st_size <= 20000
    assert json.loads(report.read_text())["stop_reason"] == "output_limit"


def test_an_agent_printing_on_after_the_output_stop_adds_nothing_past_the_cap(
    project: Project,
) -> None:
    # The stop's drain keeps what the agent printed before it died, up to the cap:
    # a chunk cut at the cap must leave no room for the drain to write more.
    events, _ = _run_capped_at_20000(project, ["--forever", "--ignore-sigterm"])
    assert events.stat().st_size == 20000


def test_a_token_limit_where_the_harness_reports_no_usage_is_a_config_error(
    project: Project,
) -> None:
    project.write_config(["--steps", "3"])
    toml = (project.root / "tether.toml").read_text()
    toml += '\n[profiles.copilot]\nharness = "copilot"\n'
    (project.root / "tether.toml").write_text(toml)
    done = project.tether("run", "--profile", "copilot", "--prompt", "go", "--tokens", "5000")
    assert done.returncode == 3, done.stderr
    assert "reports none" in done.stderr and "--iterations" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_a_cost_limit_for_a_vibe_model_without_prices_is_a_config_error(
    project: Project,
) -> None:
    # Vibe's cost is derived from the active model's prices: none configured, none to stop on.
    vibe_home = project.root.parent / "vibe-home"
    vibe_home.mkdir()
    (vibe_home / "config.toml").write_text(
        'active_model = "free"\n\n[[models]]\nname = "free"\nprovider = "mistral"\n'
    )
    project.write_config(["--steps", "3"])
    toml = (project.root / "tether.toml").read_text()
    toml += f'\n[profiles.vibe]\nharness = "vibe"\nenv = {{ VIBE_HOME = "{vibe_home}" }}\n'
    (project.root / "tether.toml").write_text(toml)
    done = project.tether("run", "--profile", "vibe", "--prompt", "go", "--cost", "0.5")
    assert done.returncode == 3, done.stderr
    assert "'free' has no prices" in done.stderr and "input_price" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
