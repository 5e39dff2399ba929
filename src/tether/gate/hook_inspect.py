"""Reading a harness's hook files: is tether's gate in them, and what decides
which hooks run (``tether doctor`` reads these; writing them is ``hook_install``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from tether.gate import pi_gate_extension
from tether.gate.hook_file import InstallError, dump_json, load_json_object, read_text
from tether.gate.hook_install import config_path, plan
from tether.gate.hook_json import strip_ours
from tether.gate.hook_vibe import VIBE_BEGIN


class Placement(NamedTuple):
    """Whether one hook file holds tether's gate (``tether doctor`` reads these)."""

    harness: str
    scope: str
    path: str
    present: bool  # tether's gate entries are in the file
    current: bool  # ... exactly as ``tether hooks install`` would write them now
    error: str | None = None  # the file cannot be read or is malformed


def _holds_ours(harness: str, path: str, text: str) -> bool:
    if harness == "pi":
        return pi_gate_extension.MARKER in text
    if harness == "vibe":
        return any(line.strip() == VIBE_BEGIN for line in text.splitlines())
    hooks = load_json_object(path, text).get("hooks", {})
    if not isinstance(hooks, dict):
        return False
    return strip_ours(hooks, grouped=harness != "copilot") != hooks


def placement(
    harness: str,
    scope: str,
    project_dir: str,
    environ: Mapping[str, str] | None = None,
    gate: list[str] | None = None,
) -> Placement:
    """Where ``harness`` keeps its ``scope`` hooks, and whether the gate is there."""
    path = config_path(harness, scope, project_dir, environ)
    try:
        text = read_text(path)
        if text is None:
            return Placement(harness, scope, path, False, False)
        present = _holds_ours(harness, path, text)
        change = plan(
            harness, scope, install=True, project_dir=project_dir, gate=gate, environ=environ
        )
    except InstallError as exc:
        return Placement(harness, scope, path, False, False, str(exc))
    return Placement(harness, scope, path, present, present and not change.changed)


# Claude Code's settings.json holds much beside hooks (env, model, API key
# helpers); a copy made to test the hooks keeps only what decides whether they run.
_CLAUDE_HOOK_KEYS = ("hooks", "disableAllHooks")


def hooks_only(harness: str, path: str, text: str) -> str:
    """The part of a hook file that decides which hooks run (the whole file, but
    for Claude Code's settings.json, whose other keys stay behind)."""
    if harness != "claude-code":
        return text
    data = load_json_object(path, text)
    return dump_json({k: data[k] for k in _CLAUDE_HOOK_KEYS if k in data})
