"""The Stop hook for interactive sessions: the same decision as a tick, never the unit itself.

Claude Code (``Stop``), Codex (``Stop``) and Copilot CLI (``agentStop``) run a
command when the agent is about to end its turn, with a JSON payload on stdin.
The answer ``{"decision": "block", "reason": R}`` on stdout (exit 0) keeps the
agent working, with R as its next instruction; no answer lets it stop.

The hook decides as ``tether loop tick --dry-run`` does: level 1, then level 2
behind the guard. On ``CONTINUE`` it blocks, and R tells the session to
dispatch the unit with ``tether loop tick`` (which runs it in a fresh session)
and never to do the unit itself. On every STOP line it lets the agent stop and
prints the line (stderr; Claude Code also gets it as ``systemMessage``).

It must never trap a session. It counts consecutive blocks per session in the
store and lets the agent stop once ``stop_hook_max_blocks`` were given in a
row while the harness says the agent is already continuing because of a stop
hook (``stop_hook_active``); a new turn (``stop_hook_active`` false) starts the
count again. Any error lets the agent stop, with the error on stderr.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from tether.clock import Clock
from tether.loop.signal import PREFIX

if TYPE_CHECKING:
    from tether.loop.tick import TickResult

HARNESSES = ("claude-code", "codex", "copilot")


@dataclass(frozen=True)
class StopDecision:
    block: bool
    reason: str
    blocks: int  # consecutive blocks after this answer
    line: str | None = None  # the tick decision's signal line


def _flag(payload: Mapping[str, Any], *names: str) -> bool:
    return any(payload.get(name) is True for name in names)


def _text(payload: Mapping[str, Any], *names: str) -> str | None:
    for name in names:
        value = payload.get(name)
        if isinstance(value, str) and value:
            return value
    return None


def _no_runs(request: Any) -> Any:
    raise RuntimeError("the stop hook never starts a run")


def decide(
    payload: Mapping[str, Any],
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    clock: Clock | None = None,
) -> StopDecision:
    from tether.loop import tick_memory
    from tether.loop.context import open_loop
    from tether.loop.tick import tick

    environ = dict(os.environ if env is None else env)
    active = _flag(payload, "stop_hook_active", "stopHookActive")
    session = (
        _text(payload, "session_id", "sessionId") or environ.get("TETHER_SESSION_ID") or "unknown"
    )
    where = Path(_text(payload, "cwd") or cwd or Path.cwd())
    loop = open_loop(where, env=environ, clock=clock, dispatcher=_no_runs)
    try:
        now = loop.clock.now()
        blocks = tick_memory.stop_hook_blocks(loop.conn, session) if active else 0
        result = tick(loop, dry_run=True)  # the decision of a tick: level 1, then level 2
        cap = loop.settings.stop_hook_max_blocks
        if result.signal.is_stop:
            tick_memory.set_stop_hook_blocks(loop.conn, session, 0, now)
            return StopDecision(False, result.line, 0, line=result.line)
        what = _found(result)
        if blocks >= cap:
            tick_memory.set_stop_hook_blocks(loop.conn, session, 0, now)
            return StopDecision(
                False,
                f"the tick decision is still CONTINUE ({what}), but the stop was already "
                f"blocked {blocks} times in a row; letting the session end",
                0,
            )
        blocks += 1
        tick_memory.set_stop_hook_blocks(loop.conn, session, blocks, now)
        reason = (
            f"tether loop: the tick decision is CONTINUE: {what}. Do not do this unit in "
            f"this session. Run `tether loop tick` now: it dispatches the unit to a fresh "
            f"session and records the outcome; then end your turn again. If `tether loop "
            f"tick` cannot run here, say why and stop "
            f"(stop hook block {blocks} of at most {cap} in a row)."
        )
        return StopDecision(True, reason, blocks, line=result.line)
    finally:
        loop.close()


def _found(result: TickResult) -> str:
    work = result.level1.work
    if work is not None:
        return f"level 1 has autonomous work: {work.summary}"
    level2 = result.level2
    found = [r.line() for r in level2.reports if r.status == "found"] if level2 else []
    return "level 2 found new work (" + "; ".join(found or ["a source"]) + ")"


def answer(harness: str, decision: StopDecision) -> str:
    """The stdout text for ``harness``; empty when the agent may stop."""
    if decision.block:
        return json.dumps({"decision": "block", "reason": decision.reason}, ensure_ascii=False)
    if harness == "claude-code" and decision.line and decision.line.startswith(PREFIX):
        return json.dumps({"systemMessage": decision.line}, ensure_ascii=False)
    return "{}" if harness == "codex" else ""


def main(
    harness: str,
    raw: bytes,
    *,
    out: IO[str] | None = None,
    err: IO[str] | None = None,
    env: Mapping[str, str] | None = None,
    clock: Clock | None = None,
) -> int:
    """Read the payload, answer on ``out``; always exit 0 (a failing hook lets the agent stop)."""
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        payload = json.loads(raw.decode("utf-8") or "{}")
        if not isinstance(payload, dict):
            raise ValueError(f"the payload is a JSON {type(payload).__name__}, not an object")
        decision = decide(payload, env=env, clock=clock)
    except Exception as exc:  # never trap a session because of our own failure
        err.write(f"tether loop stop-hook: {exc}; letting the agent stop\n")
        text = answer(harness, StopDecision(False, str(exc), 0))
    else:
        if not decision.block:
            err.write(f"tether loop stop-hook: {decision.reason}\n")
        text = answer(harness, decision)
    if text:
        out.write(text + "\n")
        out.flush()
    return 0
