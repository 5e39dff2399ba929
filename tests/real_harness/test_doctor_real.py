"""``tether doctor`` against the real agent CLIs: the verdict is what the probe proves.

Each test gets a throwaway HOME (the "user's" home, where trust is kept) and a
project; PATH holds only the CLI under test. The doctor's own probe runs each
CLI against the scripted model server with a gate budget of 1.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tether.harnesses.base import Harness

pytestmark = pytest.mark.real_harness

TETHER = str(Path(sys.executable).parent / "tether")
HARNESSES = ("claude-code", "codex", "copilot", "pi", "vibe")
CHECK_FAILED = 40


def _env(tmp_path: Path, exe: Path | None) -> dict[str, str]:
    """A minimal environment: the user's HOME, and PATH with only this CLI on it."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    if exe is not None:
        link = bin_dir / exe.name
        if not link.exists():
            link.symlink_to(exe)
    node_dir = Path(shutil.which("node") or "/usr/bin/node").parent
    home = tmp_path / "user-home"
    home.mkdir(exist_ok=True)
    return {
        "PATH": os.pathsep.join([str(bin_dir), str(node_dir), "/usr/bin", "/bin"]),
        "HOME": str(home),
        "TETHER_USER_CONFIG": str(tmp_path / "no-user-config.toml"),
    }


def doctor(
    project: Path, env: dict[str, str], *args: str
) -> tuple[int, dict[str, Any] | None, str]:
    done = subprocess.run(
        [TETHER, "doctor", "--json", *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=400,
        check=False,
    )
    try:
        data = json.loads(done.stdout)
    except ValueError:
        data = None
    return done.returncode, data, done.stderr


def run_fix(fix: str, project: Path, env: dict[str, str]) -> None:
    """Run the fix the doctor printed, as a user would paste it."""
    for part in fix.split(" && "):
        argv = shlex.split(part)
        assert argv[0] == "tether", fix
        done = subprocess.run(
            [TETHER, *argv[1:]],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, (part, done.stdout, done.stderr)


def only(data: dict[str, Any] | None, harness: str) -> dict[str, Any]:
    assert data is not None
    checks = [c for c in data["checks"] if c["harness"] == harness]
    assert len(checks) == 1, data
    check: dict[str, Any] = checks[0]
    return check


def test_codex_untrusted_project_hooks_are_not_enforced_until_trusted(
    agent_cli: Callable[[str], tuple[Harness, Path]], tmp_path: Path
) -> None:
    _adapter, exe = agent_cli("codex")
    env = _env(tmp_path, exe)
    project = tmp_path / "project"
    project.mkdir()
    codex_home = Path(env["HOME"]) / ".codex"
    codex_home.mkdir()
    # the user trusts the project folder, but has not reviewed its hooks
    (codex_home / "config.toml").write_text(f'[projects."{project}"]\ntrust_level = "trusted"\n')
    run_fix(f"tether hooks install --harness codex --project-dir {project}", project, env)

    code, data, err = doctor(project, env, "--harness", "codex")
    check = only(data, "codex")
    assert code == CHECK_FAILED, (err, check)
    assert check["verdict"] == "not enforced", check
    assert "Codex has not trusted the gate hooks" in check["why"], check
    assert check["fix"] == f"tether hooks trust --harness codex --project-dir {project}"
    assert check["probe"]["second_ran"] and check["probe"]["gate_refused"] == 0, check
    assert {t["state"] for t in check["trust"] if t["what"] == "codex project hook"} == {
        "untrusted"
    }

    run_fix(check["fix"], project, env)
    code, data, err = doctor(project, env, "--harness", "codex")
    check = only(data, "codex")
    assert code == 0, (err, check)
    assert check["verdict"] == "enforced", check
    assert check["line"] == "codex: enforced"
    probe = check["probe"]
    assert probe["first_ran"] and not probe["second_ran"], probe
    assert probe["gate_refused"] >= 1, probe


@pytest.mark.parametrize("harness", HARNESSES)
def test_not_enforced_without_the_gate_then_enforced_after_the_fix(
    harness: str, agent_cli: Callable[[str], tuple[Harness, Path]], tmp_path: Path
) -> None:
    _adapter, exe = agent_cli(harness)
    env = _env(tmp_path, exe)
    project = tmp_path / "project"
    project.mkdir()

    code, data, err = doctor(project, env, "--harness", harness)
    check = only(data, harness)
    assert code == CHECK_FAILED, (err, check)
    assert check["verdict"] == "not enforced", check
    assert check["why"].startswith("no gate hook is installed"), check
    assert check["fix"].startswith(f"tether hooks install --harness {harness} "), check
    assert check["line"] == f"{harness}: not enforced: {check['why']} — fix: {check['fix']}"
    assert check["executable"] == str(tmp_path / "bin" / exe.name)
    assert check["version"], check
    assert {h["scope"] for h in check["hooks"]} == {"project", "user"}
    assert not any(h["present"] for h in check["hooks"])
    probe = check["probe"]
    assert probe["first_ran"] and probe["second_ran"], probe
    assert probe["model_calls"] >= 3, probe
    assert data is not None and data["ok"] is False
    # the project is untouched by the probe: no side-effect file, no state folder
    assert sorted(p.name for p in project.iterdir()) == []

    run_fix(check["fix"], project, env)
    code, data, err = doctor(project, env, "--harness", harness)
    check = only(data, harness)
    assert code == 0, (err, check)
    assert check["verdict"] == "enforced", check
    assert any(h["present"] and h["current"] for h in check["hooks"]), check
    probe = check["probe"]
    assert probe["first_ran"] and not probe["second_ran"], probe
    assert probe["gate_refused"] >= 1, probe
    assert data is not None and data["ok"] is True
    if harness == "pi":  # the pinned `pi` is Pi 0.73, told apart from Pi 1.x by its package
        assert check["trust"] == [], check
        assert any("Pi 0.x" in note for note in check["notes"]), check
    # progress on stderr while the probe runs, the report alone on stdout
    assert err.splitlines() == [
        f"doctor: probing {harness} side by side ...",
        f"doctor: {harness}: enforced",
    ]
    # nothing but the hook files the fix wrote is in the project
    assert {p.name for p in project.iterdir()} <= {".claude", ".codex", ".github", ".pi", ".vibe"}


def test_not_installed_when_no_cli_is_on_path(tmp_path: Path) -> None:
    env = _env(tmp_path, None)
    project = tmp_path / "project"
    project.mkdir()
    code, data, err = doctor(project, env)
    assert code == 0, err
    assert data is not None
    assert [(c["harness"], c["verdict"]) for c in data["checks"]] == [
        (h, "not installed") for h in HARNESSES
    ]
    assert all(c["probe"] is None for c in data["checks"])
    assert err == ""  # nothing to probe, nothing to wait for
    text = subprocess.run(
        [TETHER, "doctor", "--harness", "pi"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert text.returncode == 0
    assert text.stdout.splitlines()[-1] == "pi: not installed"


def test_codex_user_scope_hooks_trusted_in_the_users_config_are_enforced(
    agent_cli: Callable[[str], tuple[Harness, Path]], tmp_path: Path
) -> None:
    """Codex keys hook trust by the hooks.json path: the probe's copy of the user's
    CODEX_HOME must carry that trust over to its own copy of the file."""
    _adapter, exe = agent_cli("codex")
    env = _env(tmp_path, exe)
    project = tmp_path / "project"
    project.mkdir()
    run_fix("tether hooks install --harness codex --scope user", project, env)
    code, data, err = doctor(project, env, "--harness", "codex")
    check = only(data, "codex")
    assert code == CHECK_FAILED, (err, check)
    assert check["fix"] == "tether hooks trust --harness codex --scope user", check

    run_fix(check["fix"], project, env)
    code, data, err = doctor(project, env, "--harness", "codex")
    check = only(data, "codex")
    assert code == 0, (err, check)
    assert check["verdict"] == "enforced", check
    assert {t["state"] for t in check["trust"] if t["what"] == "codex user hook"} == {"trusted"}


def test_codex_notes_the_projects_other_hooks(
    agent_cli: Callable[[str], tuple[Harness, Path]], tmp_path: Path
) -> None:
    """``tether run`` runs a project's hooks without trust: the doctor names the file."""
    _adapter, exe = agent_cli("codex")
    env = _env(tmp_path, exe)
    project = tmp_path / "project"
    (project / ".codex").mkdir(parents=True)
    own = {"type": "command", "command": "true", "timeout": 5}
    hooks = {"hooks": {"Stop": [{"hooks": [own]}]}}
    (project / ".codex" / "hooks.json").write_text(json.dumps(hooks))
    run_fix(
        f"tether hooks install --harness codex --project-dir {project}"
        f" && tether hooks trust --harness codex --project-dir {project} --trust-project",
        project,
        env,
    )
    code, data, err = doctor(project, env, "--harness", "codex")
    check = only(data, "codex")
    assert code == 0, (err, check)
    assert check["verdict"] == "enforced", check
    assert any(
        note.startswith(f"{project / '.codex' / 'hooks.json'} holds hooks other than tether's")
        for note in check["notes"]
    ), check


def test_a_hook_that_runs_a_gone_tether_gate_is_not_enforced(
    agent_cli: Callable[[str], tuple[Harness, Path]], tmp_path: Path
) -> None:
    _adapter, exe = agent_cli("claude-code")
    env = _env(tmp_path, exe)
    project = tmp_path / "project"
    project.mkdir()
    run_fix(f"tether hooks install --harness claude-code --project-dir {project}", project, env)
    settings = project / ".claude" / "settings.json"
    gate = str(Path(sys.executable).parent / "tether-gate")
    settings.write_text(settings.read_text().replace(gate, str(tmp_path / "gone" / "tether-gate")))
    code, data, err = doctor(project, env, "--harness", "claude-code")
    check = only(data, "claude-code")
    assert code == CHECK_FAILED, (err, check)
    assert check["why"] == f"the hook in {settings} runs another tether-gate than this one"
    assert check["fix"] == f"tether hooks install --harness claude-code --project-dir {project}"
    assert check["probe"]["second_ran"], check


def test_a_cli_only_a_profile_finds_is_checked_too(
    agent_cli: Callable[[str], tuple[Harness, Path]], tmp_path: Path
) -> None:
    _adapter, exe = agent_cli("claude-code")
    env = _env(tmp_path, None)  # not on the user's PATH
    project = tmp_path / "project"
    project.mkdir()
    profile_path = os.pathsep.join([str(exe.parent), env["PATH"]])
    (project / "tether.toml").write_text(
        f'[profiles.claude]\nharness = "claude-code"\ndefault = true\n'
        f'env = {{ PATH = "{profile_path}" }}\n'
    )
    run_fix(f"tether hooks install --harness claude-code --project-dir {project}", project, env)
    code, data, err = doctor(project, env, "--harness", "claude-code")
    assert data is not None, err
    found = [(c["found_by"], c["verdict"]) for c in data["checks"]]
    assert found == [("PATH", "not installed"), ("profile claude", "enforced")], data
    assert code == 0, err


def test_a_probe_that_runs_out_of_time_says_so(
    agent_cli: Callable[[str], tuple[Harness, Path]], tmp_path: Path
) -> None:
    """Vibe needs far more than a second to start: the probe stops it and says why."""
    _adapter, exe = agent_cli("vibe")
    env = _env(tmp_path, exe)
    project = tmp_path / "project"
    project.mkdir()
    code, data, err = doctor(project, env, "--harness", "vibe", "--timeout", "1")
    check = only(data, "vibe")
    assert code == CHECK_FAILED, (err, check)
    assert check["why"] == "probe timed out after 1 s", check
    assert check["fix"] == "tether doctor --harness vibe --timeout 2"
    assert check["probe"]["timed_out"] and check["probe"]["seconds"] < 30, check


def test_pi_1x_project_hooks_hold_only_in_a_trusted_project(
    agent_cli: Callable[[str], tuple[Harness, Path]], tmp_path: Path
) -> None:
    """Pi 1.x loads a project's extensions only once the project is trusted (Pi 0.73 always
    does): the doctor reads Pi's trust.json, says so, and its probe carries the trust."""
    _adapter, exe = agent_cli("pi-1")
    env = _env(tmp_path, exe)
    project = tmp_path / "project"
    project.mkdir()
    run_fix("tether hooks install --harness pi", project, env)
    code, data, err = doctor(project, env, "--harness", "pi")
    check = only(data, "pi")
    assert code == CHECK_FAILED, (err, check)
    assert [t["state"] for t in check["trust"] if t["what"] == "pi folder"] == ["untrusted"]
    assert "Pi 1.x does not trust the folder" in check["why"], check
    assert any("Pi 1.x" in note for note in check["notes"]), check
    # the person trusts the project in Pi (what `/trust` saves)
    trust = Path(env["HOME"]) / ".pi" / "agent" / "trust.json"
    trust.parent.mkdir(parents=True, exist_ok=True)
    trust.write_text(json.dumps({str(project.resolve()): True}), encoding="utf-8")
    code, data, err = doctor(project, env, "--harness", "pi")
    check = only(data, "pi")
    assert code == 0, (err, check)
    assert check["verdict"] == "enforced", check
    # the fix the doctor gave instead works without any trust: the user's extension
    trust.unlink()
    run_fix("tether hooks install --harness pi --scope user", project, env)
    code, data, err = doctor(project, env, "--harness", "pi")
    assert code == 0 and only(data, "pi")["verdict"] == "enforced", (err, data)
