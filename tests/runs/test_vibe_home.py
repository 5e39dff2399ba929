"""A Vibe run's own VIBE_HOME: the user's entries linked, the gate's hook added, nothing of
the user's changed; a Vibe profile whose CLI is missing says so before anything runs."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from tests.runs.conftest import Project

from tether.core.errors import ConfigError
from tether.core.exit_codes import ExitCode
from tether.runs.vibe_home import write_run_vibe_home

USER_HOOKS = '# mine\n[[hooks]]\nname = "lint"\ntype = "post_agent"\ncommand = "make lint"\n'


def test_the_run_home_links_the_user_home_and_adds_the_gate(tmp_path: Path) -> None:
    user = tmp_path / "vibe"
    user.mkdir()
    (user / "config.toml").write_text('active_model = "m"\n')
    (user / ".env").write_text("MISTRAL_API_KEY=k\n")
    (user / "hooks.toml").write_text(USER_HOOKS)
    run = tmp_path / "runs" / "r1"
    hooks = write_run_vibe_home(run, {"VIBE_HOME": str(user)}, ["/opt/bin/tether-gate"])
    home = run / "vibe-home"
    assert hooks == home / "hooks.toml"
    for name in ("config.toml", ".env", "logs"):
        assert (home / name).is_symlink() and (home / name).resolve() == user / name
    assert (user / "logs").is_dir()  # made, so sessions land in the user's log folder
    entries = tomllib.loads(hooks.read_text())["hooks"]
    assert [(h["name"], h["type"]) for h in entries] == [
        ("lint", "post_agent"),
        ("tether-gate-pre-tool", "pre_tool"),
    ]
    assert entries[1]["command"] == "/opt/bin/tether-gate hook --harness vibe"
    assert (user / "hooks.toml").read_text() == USER_HOOKS
    assert sorted(p.name for p in user.iterdir()) == [".env", "config.toml", "hooks.toml", "logs"]


def test_without_vibe_home_the_user_home_is_dot_vibe(tmp_path: Path) -> None:
    run = tmp_path / "run"
    hooks = write_run_vibe_home(run, {"HOME": str(tmp_path)}, ["/g"])
    assert (run / "vibe-home" / "logs").resolve() == tmp_path / ".vibe" / "logs"
    assert "tether-gate-pre-tool" in hooks.read_text()


def test_a_user_hooks_file_that_cannot_take_the_gate_is_a_config_error(tmp_path: Path) -> None:
    user = tmp_path / "vibe"
    user.mkdir()
    (user / "hooks.toml").write_text("[[hooks]\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        write_run_vibe_home(tmp_path / "run", {"VIBE_HOME": str(user)}, ["/g"])
    assert (user / "hooks.toml").read_text() == "[[hooks]\n"


def test_a_vibe_profile_without_vibe_on_path_is_harness_not_found(project: Project) -> None:
    (project.root / "tether.toml").write_text(
        '[profiles.v]\nharness = "vibe"\nmodel = "m"\n'
        f'env = {{ VIBE_HOME = "{project.root}/vh" }}\ndefault = true\n'
    )
    done = project.tether("run", "--prompt", "go")
    assert done.returncode == int(ExitCode.HARNESS_NOT_FOUND), done.stderr
    assert "'vibe' was not found on PATH" in done.stderr
    assert not (project.root / "vh" / "hooks.toml").exists()
