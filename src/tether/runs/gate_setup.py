"""Per-run hooks: the harness itself honours the run's budget, through the gate.

Claude Code (and the scripted harness in every format) gets a ``--settings``
file whose PreToolUse/PostToolBatch hooks call ``tether-gate``; the real pi gets
an extension that refuses calls and aborts before model request N+1; Codex a
``PreToolUse`` hook on its command line; Copilot a plugin folder whose hooks
call the gate. For every
harness the gate holds the run's budget under the session id tether chose: the
agent's environment carries it (``TETHER_SESSION_ID`` with ``TETHER_RUN_ID``),
so gate hooks the user installed (Codex, Copilot CLI) bind the harness's own id
to it on their first call, and ``tether-gate tick`` in a tool wrapper counts
under it directly.
"""

from __future__ import annotations

import contextlib
import json
import shlex
import shutil
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from tether.config import Config, Profile
from tether.core.errors import ConfigError
from tether.fs import atomic_write_json, atomic_write_text
from tether.gate.hook_command import HOOK_TIMEOUT_S
from tether.harnesses.base import Harness
from tether.run_status import RunStatus
from tether.runs.budget import Budget
from tether.runs.record import RunPaths

# The per-run hook each harness gets, by the harness a profile names. Another
# harness plugs in with one writer here (see _WRITERS).
CODEX_BYPASS_TRUST = "--dangerously-bypass-hook-trust"


@dataclass(frozen=True)
class RunHooks:
    """What makes one run's harness ask the gate before every tool call."""

    # "settings", "extension", "codex-config", "copilot-plugin", "vibe-home"
    kind: str | None = None
    settings: Path | None = None  # given to the harness as RunSpec.settings_path
    args: tuple[str, ...] = ()  # added to the harness's own arguments

    @property
    def installed(self) -> bool:
        return self.kind is not None

    @property
    def self_stopping(self) -> bool:
        """The hook ends the harness itself at the iteration limit: Pi's extension aborts
        before model request N+1, Claude Code's ``PostToolBatch`` answers ``continue:
        false`` after step N (the scripted harness obeys the same answer)."""
        return self.kind in ("extension", "settings")


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


def _settings(paths: RunPaths, gate: list[str], env: Mapping[str, str]) -> RunHooks:
    """Claude Code's ``--settings``; the scripted harness reads it in every format."""
    from tether.gate.hook_install import claude_settings_for_run

    hooks = [*gate, "hook", "--harness", "claude-code"]
    atomic_write_json(paths.settings, claude_settings_for_run(hooks))
    return RunHooks("settings", settings=paths.settings)


def _pi(paths: RunPaths, gate: list[str], env: Mapping[str, str]) -> RunHooks:
    from tether.gate.pi_gate_extension import render

    extension = paths.root / "tether-gate.ts"
    atomic_write_text(extension, render(gate))
    return RunHooks("extension", settings=extension)


def _codex(paths: RunPaths, gate: list[str], env: Mapping[str, str]) -> RunHooks:
    """A ``PreToolUse`` hook given on the command line (``-c``), for this run only.

    Codex runs a hook only once its definition is trusted, and a command-line
    hook has no place to keep trust, so the run passes
    ``--dangerously-bypass-hook-trust``: for this run every enabled hook runs
    untrusted, the project's own ``.codex/hooks.json`` included (``tether
    doctor`` says so when that file holds hooks other than tether's).
    """
    command = shlex.join([*gate, "hook", "--harness", "codex"])
    value = (
        'hooks.PreToolUse=[{matcher="*",hooks=[{type="command",command='
        + json.dumps(command)
        + f",timeout={HOOK_TIMEOUT_S}}}]}}]"
    )
    return RunHooks("codex-config", args=(CODEX_BYPASS_TRUST, "-c", value))


def _copilot(paths: RunPaths, gate: list[str], env: Mapping[str, str]) -> RunHooks:
    """A plugin folder (``--plugin-dir``) whose ``hooks.json`` holds the gate.

    Copilot loads a plugin's hooks without folder trust, next to any hooks of
    the project or the user; the gate counts each call once whichever of them
    deliver it (contracts.call_fingerprint).
    """
    folder = paths.root / "copilot-plugin"
    folder.mkdir(exist_ok=True)
    hooks = {
        "version": 1,
        "hooks": {
            event: [
                {
                    "type": "command",
                    "bash": shlex.join([*gate, "hook", "--harness", "copilot", "--event", event]),
                    "timeoutSec": HOOK_TIMEOUT_S,
                }
            ]
            for event in ("preToolUse",)
        },
    }
    atomic_write_json(folder / "hooks.json", hooks)
    manifest = {
        "name": "tether-run",
        "description": "tether's call-budget gate for one run",
        "version": "1.0.0",
        "hooks": "hooks.json",
    }
    atomic_write_json(folder / "plugin.json", manifest)
    return RunHooks("copilot-plugin", args=("--plugin-dir", str(folder)))


def _vibe(paths: RunPaths, gate: list[str], env: Mapping[str, str]) -> RunHooks:
    """A run's own ``VIBE_HOME`` whose hooks.toml adds the gate's ``pre_tool`` hook."""
    from tether.runs.vibe_home import write_run_vibe_home

    return RunHooks("vibe-home", settings=write_run_vibe_home(paths.root, env, gate))


_WRITERS: dict[str, Callable[[RunPaths, list[str], Mapping[str, str]], RunHooks]] = {
    "claude-code": _settings,
    "scripted": _settings,
    "pi": _pi,
    "codex": _codex,
    "copilot": _copilot,
    "vibe": _vibe,
}


def write_run_hooks(
    paths: RunPaths, profile: Profile, adapter: Harness, env: Mapping[str, str]
) -> RunHooks:
    """Per-run hooks that make the harness itself ask the gate before every tool call.

    The gate holds the run's budget already (``register_budget``), under the
    session id tether chose, which installed hooks and tool wrappers count
    against. A harness without a hook contract gets no per-run hook
    (``RunHooks()``): its limits come from the event stream alone. ``env`` is
    the agent's environment (Vibe's per-run home is laid over the user's
    ``VIBE_HOME`` read from it).
    """
    writer = _WRITERS.get(profile.harness)
    if profile.harness == "vibe" and stream_format(adapter) != "vibe":
        writer = None
    if writer is None and stream_format(adapter) == "claude-code":
        writer = _settings
    if writer is None:
        return RunHooks()
    from tether.gate.hook_install import byte_compile

    byte_compile()
    return writer(paths, gate_command(), {**env, **profile.env})


def register_budget(config: Config, session_id: str, budget: Budget, run_id: str) -> None:
    """The run's call and iteration budgets, held by the gate under the run's session id.

    Whatever the harness: hooks the user installed (Codex, Copilot CLI) and
    ``tether-gate tick`` in a tool wrapper count against it too.
    """
    from tether.gate import gate_db as db
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


@contextlib.contextmanager
def gate_db_held_open(home: Path) -> Iterator[None]:
    """Keep the gate database open while the run's agent runs.

    SQLite checkpoints the WAL, and syncs the file, when the last connection to
    a database closes. With this one open, no gate call of the run and no lock
    at its stop is that last connection: each costs a write, not a sync, which
    keeps the stop delay in bench/limit.py. Only a speed-up: a database that
    cannot be opened here is left to the gate's own error handling.
    """
    from tether.gate import gate_db as db

    try:
        conn = db.connect(str(home))
    except (db.GateDatabaseError, db.Error):
        yield
        return
    try:
        yield
    finally:
        conn.close()


def lock_session(home: str, session_id: str) -> None:
    from tether.gate.counter import session_status, set_session_budget

    status = session_status(Path(home), session_id)
    # No call after this one: the budget shrinks to what is used, never grows.
    set_session_budget(
        Path(home),
        session_id,
        calls=min(status.calls_used, status.call_budget),
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
