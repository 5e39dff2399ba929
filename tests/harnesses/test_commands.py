"""What each adapter asks its CLI to run, and where it finds the CLI's own log."""

from __future__ import annotations

from pathlib import Path

import pytest

from tether.core.errors import ConfigError
from tether.harnesses import get_harness
from tether.harnesses.base import RunSpec

SID = "3f0c1a52-9a55-4b7e-8f0e-2b1c7d9e4a10"
FULL = RunSpec(prompt="do it", model="m1", session_id=SID, max_turns=9)


def test_codex_argv() -> None:
    codex = get_harness("codex")
    assert codex.build_command(FULL) == ["codex", "exec", "--json", "--model", "m1", "--", "do it"]
    spec = RunSpec(
        prompt="resume",
        extra_args=("--skip-git-repo-check",),
        settings_path=Path("/h/.codex/tether.config.toml"),
    )
    assert codex.build_command(spec) == [
        "codex", "exec", "--json", "--profile", "tether", "--skip-git-repo-check", "--", "resume",
    ]  # fmt: skip
    with pytest.raises(ConfigError, match=r"<name>\.config\.toml"):
        codex.build_command(RunSpec(prompt="x", settings_path=Path("hooks.json")))


def test_pi_argv() -> None:
    pi = get_harness("pi")
    assert pi.build_command(FULL) == ["pi", "--mode", "json", "--model", "m1", "do it"]
    hooks = RunSpec(prompt="@notes and -v", settings_path=Path("/run/gate.ts"))
    assert pi.build_command(hooks) == [
        "pi", "--mode", "json", "--extension", "/run/gate.ts", " @notes and -v",
    ]  # fmt: skip
    with pytest.raises(ConfigError, match="extension"):
        pi.build_command(RunSpec(prompt="x", settings_path=Path("settings.json")))


def test_copilot_argv() -> None:
    copilot = get_harness("copilot")
    assert copilot.build_command(FULL) == [
        "copilot", "-p", "do it", "--output-format", "json", "--model", "m1", "--session-id", SID,
    ]  # fmt: skip
    with pytest.raises(ConfigError, match="COPILOT_HOME"):
        copilot.build_command(RunSpec(prompt="x", settings_path=Path("s.json")))


def test_vibe_argv() -> None:
    vibe = get_harness("vibe")
    assert vibe.build_command(FULL) == [
        "env", "VIBE_ACTIVE_MODEL=m1", "vibe", "-p", "do it", "--output", "streaming",
        "--max-turns", "9",
    ]  # fmt: skip
    assert vibe.build_command(RunSpec(prompt="-x")) == [
        "vibe", "-p", " -x", "--output", "streaming",
    ]  # fmt: skip
    belts = RunSpec(
        prompt="go",
        max_turns=3,
        max_tokens=5000,
        max_cost_usd=0.5,
        time_limit_seconds=60.2,
        settings_path=Path("/runs/r1/vibe-home/hooks.toml"),
    )
    assert vibe.build_command(belts) == [
        "env", "VIBE_HOME=/runs/r1/vibe-home", "vibe", "-p", "go", "--output", "streaming",
        "--max-turns", "3", "--max-tokens", "5000", "--max-price", "0.5", "--time-limit", "66",
    ]  # fmt: skip


def test_codex_rollout_found_in_any_date_folder(tmp_path: Path) -> None:
    sessions = tmp_path / "codex-home" / "sessions"
    old = sessions / "2026" / "11" / "29" / f"rollout-2026-11-29T23-59-58-{SID}.jsonl"
    old.parent.mkdir(parents=True)
    old.write_text("")
    other = sessions / "2026" / "11" / "30" / "rollout-2026-11-30T00-00-01-someone-else.jsonl"
    other.parent.mkdir(parents=True)
    other.write_text("")
    codex = get_harness("codex")
    assert codex.session_file(SID, {"CODEX_HOME": str(tmp_path / "codex-home")}) == old
    assert codex.session_file(SID, {"HOME": str(tmp_path)}) is None
    assert codex.session_file("../x", {"CODEX_HOME": str(tmp_path)}) is None


def test_pi_copilot_and_vibe_logs(tmp_path: Path) -> None:
    pi_file = (
        tmp_path / ".pi" / "agent" / "sessions" / "--w--" / f"2026-11-30T03-34-08-370Z_{SID}.jsonl"
    )
    pi_file.parent.mkdir(parents=True)
    pi_file.write_text("")
    env = {"HOME": str(tmp_path)}
    assert get_harness("pi").session_file(SID, env) == pi_file
    copilot_file = tmp_path / ".copilot" / "session-state" / SID / "events.jsonl"
    assert get_harness("copilot").session_file(SID, env) == copilot_file
    journal = tmp_path / "vh" / "logs" / "session" / "unified" / SID / "journal"
    journal.mkdir(parents=True)
    for segment in ("0000000000000070.jsonl", "0000000000000001.jsonl"):
        (journal / segment).write_text("")
    vibe_env = {"VIBE_HOME": str(tmp_path / "vh")}
    vibe = get_harness("vibe")
    assert vibe.session_file(SID, vibe_env) == journal / "0000000000000001.jsonl"
    assert vibe.session_file(SID[:8] + "-other", vibe_env) is None
    assert vibe.session_file("../" + SID, vibe_env) is None
    assert vibe.session_file(SID, {"HOME": str(tmp_path)}) is None
