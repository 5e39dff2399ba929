"""The Stop hook for interactive sessions: don't stop while level 1 has autonomous work.

Claude Code (``Stop``), Codex (``Stop``) and Copilot CLI (``agentStop``) run a
command when the agent is about to end its turn, with a JSON payload on stdin.
The answer ``{"decision": "block", "reason": R}`` on stdout (exit 0) keeps the
agent working, with R as its next instruction; no answer lets it stop.

It must never trap a session. So it blocks only while level 1 has work (a
quick look: BLOCKED checks are not run inside a hook); it counts consecutive
blocks per session in the store and lets the agent stop once
``stop_hook_max_blocks`` were given in a row while the harness says the agent
is already continuing because of a stop hook (``stop_hook_active``); a new
turn (``stop_hook_active`` false) starts the count again. Any error lets the
agent stop, with the error on stderr.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from tether.clock import Clock

HARNESSES = ("claude-code", "codex", "copilot")


@dataclass(frozen=True)
class StopDecision:
    block: bool
    reason: str
    blocks: int  # consecutive blocks after this answer


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
    from tether.loop import records
    from tether.loop.context import open_loop
    from tether.loop.level1 import scan

    environ = dict(os.environ if env is None else env)
    active = _flag(payload, "stop_hook_active", "stopHookActive")
    session = (
        _text(payload, "session_id", "sessionId") or environ.get("TETHER_SESSION_ID") or "unknown"
    )
    where = Path(_text(payload, "cwd") or cwd or Path.cwd())
    loop = open_loop(where, env=environ, clock=clock, dispatcher=_no_runs)
    try:
        now = loop.clock.now()
        blocks = records.stop_hook_blocks(loop.conn, session) if active else 0
        work = scan(loop, loop.board.load(), dry_run=True, run_checks=False).work
        cap = loop.settings.stop_hook_max_blocks
        if work is None:
            records.set_stop_hook_blocks(loop.conn, session, 0, now)
            return StopDecision(False, "level 1 has no autonomous work left", 0)
        if blocks >= cap:
            records.set_stop_hook_blocks(loop.conn, session, 0, now)
            return StopDecision(
                False,
                f"level 1 still has work ({work.summary}), but the stop was already "
                f"blocked {blocks} times in a row; letting the session end",
                0,
            )
        blocks += 1
        records.set_stop_hook_blocks(loop.conn, session, blocks, now)
        how = (
            "run `tether loop tick` and tether triages it"
            if work.source == "intake"
            else "do this unit next"
        )
        reason = (
            f"tether loop: level 1 still has autonomous work: {work.summary}. Please {how}. "
            f"If it cannot be done without the user, say why and stop "
            f"(stop hook block {blocks} of at most {cap} in a row)."
        )
        return StopDecision(True, reason, blocks)
    finally:
        loop.close()


def answer(harness: str, decision: StopDecision) -> str:
    """The stdout text for ``harness``; empty when the agent may stop."""
    if decision.block:
        return json.dumps({"decision": "block", "reason": decision.reason}, ensure_ascii=False)
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
