"""Per-run hooks: the harness itself honours the run's budget, through the gate.

Claude Code (and the scripted harness in its format) gets a ``--settings`` file
whose PreToolUse/PostToolBatch hooks call ``tether-gate``; the real pi gets an
extension that refuses calls and aborts before model request N+1. For every
harness the gate holds the run's budget under the session id tether chose: the
agent's environment carries it (``TETHER_SESSION_ID`` with ``TETHER_RUN_ID``),
so gate hooks the user installed (Codex, Copilot CLI) bind the harness's own id
to it on their first call, and ``tether-gate tick`` in a tool wrapper counts
under it directly.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Mapping
from pathlib import Path

from tether.config import Config, Profile
from tether.errors import ConfigError
from tether.fs import atomic_write_json, atomic_write_text
from tether.harnesses.base import Harness
from tether.run_status import RunStatus
from tether.runs.budget import Budget
from tether.runs.record import RunPaths

# Stream formats whose harness loads a per-run settings file with hooks (Claude
# Code --settings; the scripted harness mimics it when it speaks that format).
SETTINGS_HOOKS = frozenset({"claude-code"})
# Harnesses that load a per-run extension module (pi --extension).
EXTENSION_HOOKS = frozenset({"pi"})
# Harnesses that read hooks only from their home folder: the run gets its own
# home laid over the user's (Vibe: a pre_tool hook in $VIBE_HOME/hooks.toml).
HOME_HOOKS = frozenset({"vibe"})


def gate_command() -> list[str]:
    """The absolute path of the installed ``tether-gate`` (never a bare interpreter name)."""
    sibling = Path(sys.executable).parent / "tether-gate"
    if sibling.exists():
        return [str(sibling)]
    found = shutil.which("tether-gate")
    if found:
        return [str(Path(found).resolve())]
    return [sys.executable, "-m", "tether.gate.hook"]


def stream_format(harness: Harness) -> str:
    """The registry name of the format the adapter reads (the scripted harness mimics one)."""
    return str(getattr(harness, "format", harness.name))


def write_run_hooks(
    config: Config,
    paths: RunPaths,
    session_id: str,
    budget: Budget,
    run_id: str,
    profile: Profile,
    adapter: Harness,
    env: Mapping[str, str] | None = None,
) -> Path | None:
    """Per-run hooks that make the harness itself honour the budget, where it can.

    Claude Code (and the scripted harness in its format) gets a ``--settings`` file
    whose PreToolUse/PostToolBatch hooks call the gate; the real pi gets an
    extension that refuses calls and aborts before model request N+1. Whatever
    the harness, the gate gets the run's budget under the session id tether
    chose, which installed hooks and tool wrappers count against. Vibe gets a
    run's own ``VIBE_HOME`` whose hooks.toml adds the gate's ``pre_tool`` hook
    (``env``: the agent's environment, where the user's ``VIBE_HOME`` is read).
    Returns the file written, or None when this harness gets no per-run file.
    """
    _register_budget(config, session_id, budget, run_id)
    if profile.harness in HOME_HOOKS and stream_format(adapter) in HOME_HOOKS:
        from tether.gate.hook_install import byte_compile
        from tether.runs.vibe_home import write_run_vibe_home

        byte_compile()
        return write_run_vibe_home(paths.root, {**(env or {}), **profile.env}, gate_command())
    kind = (
        "settings"
        if stream_format(adapter) in SETTINGS_HOOKS
        else "extension"
        if profile.harness in EXTENSION_HOOKS
        else None
    )
    if kind is None:
        return None
    from tether.gate.hook_install import byte_compile

    byte_compile()
    if kind == "settings":
        from tether.gate.hook_install import claude_settings_for_run

        hooks = [*gate_command(), "hook", "--harness", "claude-code"]
        atomic_write_json(paths.settings, claude_settings_for_run(hooks))
        return paths.settings
    from tether.gate.pi_gate_extension import render

    extension = paths.root / "tether-gate.ts"
    atomic_write_text(extension, render(gate_command()))
    return extension


def _register_budget(config: Config, session_id: str, budget: Budget, run_id: str) -> None:
    """The run's call and iteration budgets, held by the gate under the run's session id."""
    from tether.gate import db
    from tether.gate.counter import set_session_budget

    try:
        set_session_budget(
            config.home,
            session_id,
            calls=budget.tool_calls if budget.tool_calls is not None else config.gate_budget,
            iterations=budget.iterations,
            run_id=run_id,
        )
    except (db.GateDatabaseError, db.Error) as exc:
        path = db.db_file(str(config.home))
        raise ConfigError(db.unusable_message(path, exc), path=path) from None


def lock_session(home: str, session_id: str) -> None:
    from tether.gate.counter import session_status, set_session_budget

    status = session_status(Path(home), session_id)
    set_session_budget(
        Path(home),
        session_id,
        calls=status.calls_used,
        iterations=status.batches,
    )


def gate_verdict(home: str, session_id: str) -> RunStatus | None:
    from tether.gate.counter import session_status

    status = session_status(Path(home), session_id)
    if status.iteration_budget and status.batches >= status.iteration_budget:
        return RunStatus.ITERATION_LIMIT
    if status.calls_used > status.call_budget:
        return RunStatus.TOOL_CALL_LIMIT
    return None
