"""``tether hooks install|uninstall``: merging, idempotent, absolute paths, dry runs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tether.gate import hook_command, hook_file, hook_install, hook_json, pi_gate_extension

TETHER = str(Path(sys.executable).parent / "tether")
GATE = ["/opt/venv/bin/tether-gate"]


def _hooks(cmd: str = "/usr/local/bin/lint-hook") -> dict[str, Any]:
    return {
        "permissions": {"allow": ["Bash(ls:*)"]},
        "hooks": {
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": cmd}]},
            ],
            "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
        },
    }


def _plan(harness: str, project: Path, *, install_: bool = True, **kw: Any) -> hook_file.Change:
    return hook_install.plan(
        harness, "project", install=install_, project_dir=str(project), gate=GATE, **kw
    )


def _cli(
    args: list[str], cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [TETHER, "hooks", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=env,
    )


def test_claude_code_install_merges_and_is_idempotent(tmp_path: Path) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps(_hooks(), indent=2))
    change = _plan("claude-code", tmp_path)
    hook_file.apply(change)
    data = json.loads(settings.read_text())
    assert data["permissions"] == {"allow": ["Bash(ls:*)"]}
    pre = data["hooks"]["PreToolUse"]
    assert pre[0]["hooks"][0]["command"] == "/usr/local/bin/lint-hook"  # theirs stays first
    assert pre[1] == {
        "matcher": "*",
        "hooks": [
            {
                "type": "command",
                "command": "/opt/venv/bin/tether-gate hook --harness claude-code",
                "timeout": 30,
            }
        ],
    }
    assert data["hooks"]["Stop"][0]["hooks"][0]["command"] == "notify-send done"
    assert set(data["hooks"]) == {*hook_json.CLAUDE_EVENTS}
    assert "matcher" not in data["hooks"]["PostToolBatch"][0]
    # Again: nothing changes.
    assert not _plan("claude-code", tmp_path).changed
    # The gate moved: our entries are replaced, not added to.
    moved = hook_install.plan(
        "claude-code", "project", install=True, project_dir=str(tmp_path), gate=["/new/tether-gate"]
    )
    hook_file.apply(moved)
    text = settings.read_text()
    assert "/opt/venv" not in text and text.count("/new/tether-gate") == len(
        hook_json.CLAUDE_EVENTS
    )
    # Uninstall leaves exactly what was there before.
    hook_file.apply(_plan("claude-code", tmp_path, install_=False))
    assert json.loads(settings.read_text()) == _hooks()


def test_claude_settings_for_run_routes_every_event_to_the_gate() -> None:
    settings = hook_install.claude_settings_for_run(["/v/bin/tether-gate"])
    assert set(settings) == {"hooks"}
    assert set(settings["hooks"]) == set(hook_json.CLAUDE_EVENTS)
    for event, groups in settings["hooks"].items():
        (group,) = groups
        assert group["hooks"][0]["command"] == "/v/bin/tether-gate hook --harness claude-code"
        assert ("matcher" in group) == (event in hook_json.CLAUDE_TOOL_EVENTS)
    # An argv that already names the hook command is taken as it is.
    full = hook_install.claude_settings_for_run(["/v/gate", "hook", "--harness", "claude-code"])
    assert full["hooks"]["PreToolUse"][0]["hooks"][0]["command"] == (
        "/v/gate hook --harness claude-code"
    )
    spaced = hook_install.claude_settings_for_run(["/my venv/bin/tether-gate"])
    assert spaced["hooks"]["Stop"][0]["hooks"][0]["command"].startswith("'/my venv/bin/")


def test_codex_hooks_json(tmp_path: Path) -> None:
    change = _plan("codex", tmp_path)
    assert change.path == str(tmp_path / ".codex" / "hooks.json")
    hook_file.apply(change)
    data = json.loads(Path(change.path).read_text())
    assert set(data["hooks"]) == set(hook_json.CODEX_EVENTS)
    command = data["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    assert command == "/opt/venv/bin/tether-gate hook --harness codex"
    hook_file.apply(_plan("codex", tmp_path, install_=False))
    assert not Path(change.path).exists()  # it held only tether's hooks
    assert hook_install.notes("codex", "project", change.path)[0].startswith("Codex runs new")


def test_copilot_hook_file_names_each_event(tmp_path: Path) -> None:
    change = _plan("copilot", tmp_path)
    assert change.path == str(tmp_path / ".github" / "hooks" / "tether-gate.json")
    hook_file.apply(change)
    data = json.loads(Path(change.path).read_text())
    assert data["version"] == 1
    assert data["hooks"]["preToolUse"] == [
        {
            "type": "command",
            "bash": "/opt/venv/bin/tether-gate hook --harness copilot --event preToolUse",
            "timeoutSec": 30,
        }
    ]
    # Someone else's hook in the same file survives an uninstall.
    data["hooks"]["preToolUse"].insert(0, {"type": "command", "bash": "./audit.sh"})
    Path(change.path).write_text(json.dumps(data))
    hook_file.apply(_plan("copilot", tmp_path, install_=False))
    assert json.loads(Path(change.path).read_text())["hooks"] == {
        "preToolUse": [{"type": "command", "bash": "./audit.sh"}]
    }


def test_pi_extension_file(tmp_path: Path) -> None:
    change = _plan("pi", tmp_path)
    assert change.path == str(tmp_path / ".pi" / "extensions" / "tether-gate.ts")
    hook_file.apply(change)
    source = Path(change.path).read_text()
    assert pi_gate_extension.MARKER in source
    assert 'const GATE: string[] = ["/opt/venv/bin/tether-gate"];' in source
    assert 'pi.on("tool_call"' in source and "block: true" in source
    assert 'pi.on("before_provider_request"' in source
    hook_file.apply(_plan("pi", tmp_path, install_=False))
    assert not Path(change.path).exists()
    # A file of the same name that tether did not write is left alone.
    Path(change.path).write_text("// mine\n")
    with pytest.raises(hook_file.InstallError, match="was not written by tether"):
        _plan("pi", tmp_path)


VIBE_USER_HOOKS = """\
# my own guard
[[hooks]]
name = "deny-rm-rf"
type = "pre_tool"
match = "bash"
command = "/usr/local/bin/guard"
"""


def test_vibe_hooks_toml_merges_keeps_the_user_hooks_and_is_idempotent(tmp_path: Path) -> None:
    import tomllib

    hooks = tmp_path / ".vibe" / "hooks.toml"
    hooks.parent.mkdir()
    hooks.write_text(VIBE_USER_HOOKS)
    change = _plan("vibe", tmp_path)
    assert change.path == str(hooks)
    hook_file.apply(change)
    text = hooks.read_text()
    assert text.startswith(VIBE_USER_HOOKS)  # the user's text, comments and all, first
    entries = tomllib.loads(text)["hooks"]
    assert [(h["name"], h["type"]) for h in entries] == [
        ("deny-rm-rf", "pre_tool"),
        ("tether-gate-pre-tool", "pre_tool"),
        ("tether-gate-post-tool", "post_tool"),
        ("tether-gate-post-agent", "post_agent"),
    ]
    assert {h["command"] for h in entries[1:]} == {"/opt/venv/bin/tether-gate hook --harness vibe"}
    assert not _plan("vibe", tmp_path).changed  # idempotent
    hook_file.apply(_plan("vibe", tmp_path, install_=False))
    assert hooks.read_text() == VIBE_USER_HOOKS
    hooks.unlink()
    hook_file.apply(_plan("vibe", tmp_path))
    hook_file.apply(_plan("vibe", tmp_path, install_=False))
    assert not hooks.exists()  # only tether's entries were there: the file goes


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('[[hooks]]\nname = "x"\ntype = "pre_tool\n', "is not valid TOML"),
        ('hooks = [{ name = "x", type = "pre_tool", command = "c" }]\n', "is not valid TOML"),
        ('hooks = "none"\n', "is not a list of"),
    ],
)
def test_a_vibe_hooks_file_that_cannot_take_the_gate_is_refused_untouched(
    tmp_path: Path, text: str, why: str
) -> None:
    hooks = tmp_path / ".vibe" / "hooks.toml"
    hooks.parent.mkdir()
    hooks.write_text(text)
    with pytest.raises(hook_file.InstallError, match=why):
        _plan("vibe", tmp_path)
    done = _cli(["install", "--harness", "vibe", "--project-dir", str(tmp_path)], tmp_path)
    assert done.returncode == 3
    assert hooks.read_text() == text


def test_user_scope_follows_each_harness_variables(tmp_path: Path) -> None:
    env = {
        "HOME": str(tmp_path / "home"),
        "CLAUDE_CONFIG_DIR": str(tmp_path / "claude"),
        "CODEX_HOME": str(tmp_path / "codex"),
        "COPILOT_HOME": str(tmp_path / "copilot"),
        "PI_CODING_AGENT_DIR": str(tmp_path / "pi"),
        "VIBE_HOME": str(tmp_path / "vibe"),
    }
    where = {h: hook_install.config_path(h, "user", "/unused", env) for h in hook_install.HARNESSES}
    assert where == {
        "claude-code": str(tmp_path / "claude" / "settings.json"),
        "codex": str(tmp_path / "codex" / "hooks.json"),
        "copilot": str(tmp_path / "copilot" / "hooks" / "tether-gate.json"),
        "pi": str(tmp_path / "pi" / "extensions" / "tether-gate.ts"),
        "vibe": str(tmp_path / "vibe" / "hooks.toml"),
    }
    bare = {"HOME": str(tmp_path / "home")}
    assert hook_install.config_path("claude-code", "user", "/p", bare) == str(
        tmp_path / "home" / ".claude" / "settings.json"
    )


def test_a_broken_config_file_is_reported_and_left_untouched(tmp_path: Path) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text("{ not json")
    with pytest.raises(hook_file.InstallError, match="is not valid JSON"):
        _plan("claude-code", tmp_path)
    done = _cli(["install", "--harness", "claude-code", "--project-dir", str(tmp_path)], tmp_path)
    assert done.returncode == 3
    assert "is not valid JSON" in done.stderr
    assert settings.read_text() == "{ not json"


def test_cli_dry_run_prints_the_diff_and_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "tether.toml").write_text("")
    sub = tmp_path / "src"
    sub.mkdir()
    done = _cli(["install", "--harness", "claude-code", "--dry-run"], sub)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(
        "--- /dev/null\n+++ " + str(tmp_path / ".claude" / "settings.json")
    )
    gate = str(Path(sys.executable).parent / "tether-gate")
    assert f'+            "command": "{gate} hook --harness claude-code",' in done.stdout
    assert not (tmp_path / ".claude").exists()
    real = _cli(["install", "--harness", "claude-code"], sub)
    assert real.returncode == 0
    assert f"wrote {tmp_path / '.claude' / 'settings.json'}" in real.stdout
    again = _cli(["install", "--harness", "claude-code"], sub)
    assert "already installed, nothing to change" in again.stdout
    dry_out = _cli(["uninstall", "--harness", "claude-code", "--dry-run"], sub)
    assert dry_out.stdout.startswith("--- " + str(tmp_path / ".claude" / "settings.json"))
    assert (tmp_path / ".claude" / "settings.json").exists()
    gone = _cli(["uninstall", "--harness", "claude-code"], sub)
    assert "removed" in gone.stdout
    assert not (tmp_path / ".claude" / "settings.json").exists()


def test_cli_codex_install_tells_about_hook_trust(tmp_path: Path) -> None:
    done = _cli(["install", "--harness", "codex", "--project-dir", str(tmp_path)], tmp_path)
    assert done.returncode == 0
    assert "Trust all and continue" in done.stdout


def test_gate_argv_is_the_absolute_console_script() -> None:
    (gate,) = hook_command.gate_argv()
    assert Path(gate).is_absolute()
    assert Path(gate).name == "tether-gate"
    assert Path(gate).parent == Path(sys.executable).parent


# An entry where a list of hook entries belongs: merging into it would unpack
# or replace it, and the user's hook would be lost.
USER_HOOK = {"type": "command", "command": "/usr/local/bin/lint-hook"}
NOT_A_LIST = [
    pytest.param({"matcher": "Bash", "hooks": [USER_HOOK]}, "an object", id="object"),
    pytest.param("/usr/local/bin/lint-hook", "a string", id="string"),
    pytest.param(None, "null", id="null"),
    pytest.param(7, "a number", id="number"),
]
TOOL_EVENT = {"claude-code": "PreToolUse", "codex": "PreToolUse", "copilot": "preToolUse"}


def _write_not_a_list(harness: str, project: Path, value: object) -> Path:
    path = Path(hook_install.config_path(harness, "project", str(project)))
    path.parent.mkdir(parents=True)
    data: dict[str, Any] = {"hooks": {TOOL_EVENT[harness]: value}}
    if harness == "copilot":
        data = {"version": 1, **data}
    else:
        data["hooks"]["Stop"] = [{"hooks": [{"type": "command", "command": "notify-send done"}]}]
    # a layout of the user's own, so "unchanged" means byte for byte
    path.write_bytes(json.dumps(data, indent=4, sort_keys=True).encode() + b"\r\n")
    return path


@pytest.mark.slow
@pytest.mark.parametrize("harness", ["claude-code", "codex", "copilot"])
@pytest.mark.parametrize(("value", "kind"), NOT_A_LIST)
def test_an_event_entry_that_is_not_a_list_is_refused_and_left_untouched(
    tmp_path: Path, harness: str, value: object, kind: str
) -> None:
    path = _write_not_a_list(harness, tmp_path, value)
    before = path.read_bytes()
    key = f'"hooks.{TOOL_EVENT[harness]}" is {kind}, not a list'
    with pytest.raises(hook_file.InstallError, match=key):
        _plan(harness, tmp_path)
    for extra in ([], ["--dry-run"]):
        args = ["install", "--harness", harness, "--project-dir", str(tmp_path), *extra]
        done = _cli(args, tmp_path)
        assert done.returncode == 3, done.stderr
        assert f"{path}: {key}" in done.stderr
        assert "Traceback" not in done.stderr
        assert done.stdout == ""
        assert path.read_bytes() == before
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]  # no temp file left


def test_a_pi_extension_file_of_someone_else_is_refused_and_left_untouched(
    tmp_path: Path,
) -> None:
    path = Path(hook_install.config_path("pi", "project", str(tmp_path)))
    path.parent.mkdir(parents=True)
    path.write_bytes(b"export default function (pi) { /* the user's own */ }\r\n")
    before = path.read_bytes()
    done = _cli(["install", "--harness", "pi", "--project-dir", str(tmp_path)], tmp_path)
    assert done.returncode == 3
    assert f"{path} exists and was not written by tether" in done.stderr
    assert path.read_bytes() == before


@pytest.mark.parametrize("harness", ["claude-code", "codex", "copilot"])
def test_uninstall_leaves_an_entry_that_is_not_a_list_in_place(
    tmp_path: Path, harness: str
) -> None:
    path = _write_not_a_list(harness, tmp_path, {"matcher": "Bash", "hooks": [USER_HOOK]})
    change = _plan(harness, tmp_path, install_=False)
    assert change.after is not None
    kept = json.loads(change.after)["hooks"][TOOL_EVENT[harness]]
    assert kept == {"matcher": "Bash", "hooks": [USER_HOOK]}
    assert path.exists()
