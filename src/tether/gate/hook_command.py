"""The command a hook entry runs: the gate's argv, and telling tether's entries apart.

Every hook tether writes runs the installed gate by its absolute path (never a
bare ``python3``); on a later install or uninstall, the entries whose command
runs the gate are tether's own, and everything else is the user's.
"""

from __future__ import annotations

import os
import shutil
import sys

HOOK_TIMEOUT_S = 30


def gate_argv() -> list[str]:
    """The absolute argv that runs the installed gate (never a bare ``python3``)."""
    beside = os.path.join(os.path.dirname(os.path.abspath(sys.executable)), "tether-gate")
    if os.access(beside, os.X_OK):
        return [beside]
    found = shutil.which("tether-gate")
    if found:
        return [os.path.abspath(found)]
    return [os.path.abspath(sys.executable), "-m", "tether.gate.hook"]


def hook_argv(gate: list[str], harness: str, event: str | None = None) -> list[str]:
    """``gate`` completed to the hook command for ``harness`` (and ``event``, if given)."""
    argv = list(gate)
    if "hook" not in argv:
        argv += ["hook", "--harness", harness]
    if event is not None:
        argv += ["--event", event]
    return argv


def is_ours(command: object) -> bool:
    """Whether a hook entry's command runs the gate (and so is tether's to replace)."""
    return (
        isinstance(command, str)
        and ("tether-gate" in command or "tether.gate.hook" in command)
        and " hook " in f" {command} "
    )
