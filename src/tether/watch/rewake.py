"""The Claude Code rewake hook: an ``asyncRewake`` Stop hook that waits for a wake.

Claude Code's hook schema (2.1.x) has ``asyncRewake`` on command hooks: "runs
in background and wakes the model on exit code 2 (blocking error). Implies
async." So ``tether watch rewake``, installed as a Stop hook with
``asyncRewake: true``, starts each time a turn ends, announces itself as a wake
endpoint of that session (see ``endpoints``), and waits. When the watchdog
writes a wake request for it, it prints the message on stderr and exits 2:
Claude Code hands that to the model and a turn starts. It exits 0 quietly
when its Claude Code process is gone, when a newer rewake hook of the same
session took over (the next Stop), or after ``max_wait`` seconds.

The settings entry::

    {"hooks": {"Stop": [{"hooks": [{"type": "command", "asyncRewake": true,
        "command": "/abs/path/tether watch rewake"}]}]}}
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

from tether.core.agents import match_agent
from tether.watch.endpoints import live_endpoints, take_request, write_ack, write_endpoint

EXIT_WAKE = 2
DEFAULT_MAX_WAIT = 6 * 3600.0
POLL_S = 0.5
MARK = "watch rewake"


def _agent_pid(start: int) -> int:
    """The Claude Code process above this hook (else the hook's parent)."""
    try:
        process = psutil.Process(start)
        chain = [process, *process.parents()]
    except psutil.Error:
        return start
    for each in chain:
        with contextlib.suppress(psutil.Error):
            if match_agent(each.name(), tuple(each.cmdline())) is not None:
                return each.pid
    return start


def _alive(pid: int) -> bool:
    """Running, not a zombie (a Claude Code that died is not reaped while we hold its pipes)."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
    except psutil.Error:
        return True


@dataclass(frozen=True)
class StopPayload:
    """What the rewake Stop hook reads of Claude Code's payload (a field not a string: None)."""

    session_id: str | None = None
    cwd: str | None = None


def wait_for_wake(
    home: Path,
    payload: StopPayload,
    *,
    max_wait: float = DEFAULT_MAX_WAIT,
    poll: float = POLL_S,
) -> int:
    """The hook's body; returns its exit status (2 = wake the model, whose text it
    writes to stderr)."""
    now = time.time
    pid = os.getpid()
    agent = _agent_pid(os.getppid())
    session = payload.session_id
    cwd = payload.cwd
    registered = now()
    key = f"claude-code-{pid}"
    path = write_endpoint(
        home,
        {
            "kind": "claude-code",
            "pid": pid,
            "agent_pid": agent,
            "session_id": session,
            "cwd": cwd,
            "tmux_pane": os.environ.get("TMUX_PANE"),
            "registered": registered,
            "updated": registered,
            "last_activity": registered,  # the turn just stopped
            "idle": None,
        },
    )
    deadline = registered + max_wait
    try:
        while now() < deadline:
            request = take_request(home, key)
            if request is not None:
                sys.stderr.write(request.text + "\n")
                if request.id is not None:
                    write_ack(home, request.id, "asyncRewake exit 2", now())
                return EXIT_WAKE
            if not _alive(agent) or _superseded(home, pid, agent, session, registered):
                return 0
            time.sleep(poll)
        return 0
    finally:
        with contextlib.suppress(OSError):
            path.unlink()


def _superseded(home: Path, pid: int, agent: int, session: str | None, since: float) -> bool:
    for other in live_endpoints(home):
        if other.kind != "claude-code" or other.pid == pid:
            continue
        same = other.agent_pid == agent or (session is not None and other.session_id == session)
        if same and other.registered > since:
            return True
    return False


def read_payload(stream: Any) -> StopPayload:
    """The hook's stdin; anything unreadable is an empty payload."""
    try:
        data = json.loads(stream.read() or "{}")
    except ValueError:
        return StopPayload()
    if not isinstance(data, dict):
        return StopPayload()
    session, cwd = data.get("session_id"), data.get("cwd")
    return StopPayload(
        session if isinstance(session, str) else None, cwd if isinstance(cwd, str) else None
    )


def hook_entry(tether_argv: list[str]) -> dict[str, Any]:
    """The Stop hook group that runs ``tether watch rewake`` with asyncRewake."""
    command = shlex.join([*tether_argv, "watch", "rewake"])
    return {"hooks": [{"type": "command", "command": command, "asyncRewake": True}]}


def merge_settings(settings: dict[str, Any], tether_argv: list[str] | None) -> dict[str, Any]:
    """``settings`` with tether's rewake Stop hook replaced (or removed when argv is None)."""
    out = dict(settings)
    hooks = dict(out.get("hooks") or {})
    groups = [
        g
        for g in hooks.get("Stop", [])
        if not (
            isinstance(g, dict)
            and any(
                isinstance(h, dict) and MARK in str(h.get("command", ""))
                for h in g.get("hooks", [])
            )
        )
    ]
    if tether_argv is not None:
        groups.append(hook_entry(tether_argv))
    if groups:
        hooks["Stop"] = groups
    else:
        hooks.pop("Stop", None)
    if hooks:
        out["hooks"] = hooks
    else:
        out.pop("hooks", None)
    return out
