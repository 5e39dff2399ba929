"""The user's hook setup, copied into the probe's throwaway HOME.

The probe runs the CLI in the user's own project folder, so the project's hook
files, and the trust each CLI keeps for that exact path, apply as they are. What
lives in the user's HOME is copied into the probe's HOME instead, so that no
session, log or trust decision of the user's is written:

- every harness's user-scope hook file (found by ``hook_install.config_path``;
  of Claude Code's settings.json only ``hooks`` and ``disableAllHooks``);
- Codex: ``projects`` (project trust), ``hooks.state`` (hook trust: the hashes
  copied, never computed; keys of the user's own ``hooks.json`` moved to the
  probe's copy of it) and ``features`` from ``$CODEX_HOME/config.toml``;
- Copilot: ``trustedFolders`` from ``$COPILOT_HOME/config.json``;
- Vibe: ``$VIBE_HOME/trusted_folders.toml``;
- Pi 1.x: ``$PI_CODING_AGENT_DIR/trust.json`` (project trust) and
  ``defaultProjectTrust`` from its ``settings.json``.

A hook the user has not trusted stays untrusted in the copy.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tether.gate import hook_inspect, hook_install
from tether.gate.hook_file import InstallError

COPILOT_TRUST_KEYS = ("trustedFolders", "trusted_folders")


def _read(path: str | Path) -> str | None:
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _write(path: str | Path, text: str) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(text, encoding="utf-8")


def user_dir(harness: str, env: Mapping[str, str], project: str) -> Path:
    """The harness's user configuration folder (``CODEX_HOME``, ``COPILOT_HOME``, ...)."""
    path = Path(hook_install.config_path(harness, "user", project, env)).parent
    return path.parent if harness in ("copilot", "pi") else path


def copy_user_hooks(real: Mapping[str, str], probe: Mapping[str, str], project: str) -> None:
    """Every harness's user-scope hook file (Copilot also reads Claude Code's)."""
    for harness in hook_install.HARNESSES:
        src = hook_install.config_path(harness, "user", project, real)
        dst = hook_install.config_path(harness, "user", project, probe)
        text = _read(src)
        if text is None:
            continue
        try:
            _write(dst, hook_inspect.hooks_only(harness, src, text))
        except InstallError:
            _write(dst, text)  # malformed: the CLI meets it as the user's CLI would


def _toml_key(key: str) -> str:
    return json.dumps(key)


def _toml_value(value: Any) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list) and all(isinstance(v, str | bool | int | float) for v in value):
        items = [_toml_value(v) for v in value]
        return "[" + ", ".join(i for i in items if i is not None) + "]"
    return None


def _tables(prefix: str, table: Mapping[str, Any]) -> list[str]:
    """``table`` as TOML: scalars under ``[prefix]``, sub-tables under their own header."""
    lines: list[str] = []
    scalars = [(k, _toml_value(v)) for k, v in table.items() if not isinstance(v, dict)]
    scalars = [(k, v) for k, v in scalars if v is not None]
    if scalars:
        lines.append(f"[{prefix}]")
        lines += [f"{_toml_key(k)} = {v}" for k, v in scalars]
        lines.append("")
    for key, value in table.items():
        if isinstance(value, dict):
            lines += _tables(f"{prefix}.{_toml_key(key)}", value)
    return lines


def _moved_hook_key(key: str, old_files: set[str], new_file: str) -> str:
    """A ``hooks.state`` key of the user's own hooks.json, pointed at the probe's copy."""
    for old in old_files:
        if key.startswith(old + ":"):
            return new_file + key[len(old) :]
    return key


def codex_trust(real: Mapping[str, str], probe: Mapping[str, str], project: str) -> None:
    """Project trust, hook trust and feature switches, appended to the probe's config."""
    real_home = user_dir("codex", real, project)
    text = _read(real_home / "config.toml")
    if text is None:
        return
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return
    probe_home = user_dir("codex", probe, project)
    old_files = {str(real_home / "hooks.json"), str(real_home.resolve() / "hooks.json")}
    new_file = str(probe_home.resolve() / "hooks.json")
    lines: list[str] = []
    projects = data.get("projects")
    if isinstance(projects, dict):
        lines += _tables("projects", {k: v for k, v in projects.items() if isinstance(v, dict)})
    features = data.get("features")
    if isinstance(features, dict):
        lines += _tables("features", features)
    hooks = data.get("hooks")
    state = hooks.get("state") if isinstance(hooks, dict) else None
    if isinstance(state, dict):
        moved = {
            _moved_hook_key(k, old_files, new_file): v
            for k, v in state.items()
            if isinstance(v, dict)
        }
        lines += _tables("hooks.state", moved)
    if lines:
        config = probe_home / "config.toml"
        before = _read(config) or ""
        _write(config, before.rstrip("\n") + "\n\n" + "\n".join(lines) + "\n")


def copilot_trust(real: Mapping[str, str], probe: Mapping[str, str], project: str) -> None:
    text = _read(user_dir("copilot", real, project) / "config.json")
    try:
        data = json.loads(text) if text else {}
    except ValueError:
        return
    if not isinstance(data, dict):
        return
    kept = {k: data[k] for k in COPILOT_TRUST_KEYS if k in data}
    if kept:
        _write(user_dir("copilot", probe, project) / "config.json", json.dumps(kept))


def vibe_trust(real: Mapping[str, str], probe: Mapping[str, str], project: str) -> None:
    text = _read(user_dir("vibe", real, project) / "trusted_folders.toml")
    if text is not None:
        _write(user_dir("vibe", probe, project) / "trusted_folders.toml", text)


def pi_trust(real: Mapping[str, str], probe: Mapping[str, str], project: str) -> None:
    source, target = user_dir("pi", real, project), user_dir("pi", probe, project)
    text = _read(source / "trust.json")
    if text is not None:
        _write(target / "trust.json", text)
    try:
        settings = json.loads(_read(source / "settings.json") or "{}")
    except ValueError:
        return
    if isinstance(settings, dict) and "defaultProjectTrust" in settings:
        kept = {"defaultProjectTrust": settings["defaultProjectTrust"]}
        _write(target / "settings.json", json.dumps(kept))


def mirror(real: Mapping[str, str], probe: Mapping[str, str], project: str) -> None:
    """The user's hook files and trust, laid into the probe's HOME."""
    copy_user_hooks(real, probe, project)
    codex_trust(real, probe, project)
    copilot_trust(real, probe, project)
    vibe_trust(real, probe, project)
    pi_trust(real, probe, project)
