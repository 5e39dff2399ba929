"""Wake endpoints: small files through which code inside a harness takes wake requests.

An endpoint is something running inside an orchestrator's harness that can
start a turn there: the Pi wake extension (``pi.sendUserMessage``) or the
Claude Code rewake hook (an ``asyncRewake`` Stop hook that exits 2). Each one
announces itself in ``$TETHER_HOME/watch/endpoints/<kind>-<pid>.json``::

    {"kind": "pi", "pid": 4242, "agent_pid": 4242, "session_id": "…", "cwd": "…",
     "tmux_pane": "%3", "registered": 1764480000.1, "updated": …,
     "last_activity": …, "idle": true}

``last_activity`` (epoch seconds) and ``idle`` are the harness's own view, when
it has one (Pi does; the rewake hook records when the turn stopped). The daemon
asks for a wake by writing ``requests/<kind>-<pid>.json`` (``{"id", "text",
"at"}``); the endpoint takes the file (renames it), starts the turn and writes
``acks/<id>.json``. A request nobody took within ``ack_timeout`` is withdrawn
the same way (renamed away by the daemon), so it cannot start a late turn
after the wake went another way. All writes are atomic (temp file + rename).
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tether.fs import atomic_write_json

WATCH_DIR = "watch"


def watch_dir(home: Path) -> Path:
    return Path(home) / WATCH_DIR


def endpoints_dir(home: Path) -> Path:
    return watch_dir(home) / "endpoints"


def requests_dir(home: Path) -> Path:
    return watch_dir(home) / "requests"


def acks_dir(home: Path) -> Path:
    return watch_dir(home) / "acks"


@dataclass(frozen=True)
class Endpoint:
    kind: str  # "pi" | "claude-code"
    pid: int
    agent_pid: int | None
    session_id: str | None
    cwd: str | None
    tmux_pane: str | None
    registered: float
    updated: float
    last_activity: float | None
    idle: bool | None
    path: Path

    @property
    def key(self) -> str:
        return f"{self.kind}-{self.pid}"


def _number(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def read_endpoint(path: Path) -> Endpoint | None:
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    pid = data.get("pid")
    kind = _text(data.get("kind"))
    if not isinstance(pid, int) or kind is None:
        return None
    agent_pid = data.get("agent_pid")
    idle = data.get("idle")
    return Endpoint(
        kind=kind,
        pid=pid,
        agent_pid=agent_pid if isinstance(agent_pid, int) else None,
        session_id=_text(data.get("session_id")),
        cwd=_text(data.get("cwd")),
        tmux_pane=_text(data.get("tmux_pane")),
        registered=_number(data.get("registered")) or 0.0,
        updated=_number(data.get("updated")) or 0.0,
        last_activity=_number(data.get("last_activity")),
        idle=idle if isinstance(idle, bool) else None,
        path=path,
    )


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def live_endpoints(home: Path) -> list[Endpoint]:
    """Endpoints whose process still runs; files of dead ones are removed."""
    folder = endpoints_dir(home)
    try:
        paths = sorted(folder.glob("*.json"))
    except OSError:
        return []
    found: list[Endpoint] = []
    for path in paths:
        endpoint = read_endpoint(path)
        if endpoint is None:
            continue
        if not _alive(endpoint.pid):
            with contextlib.suppress(OSError):
                path.unlink()
            continue
        found.append(endpoint)
    return found


def write_endpoint(home: Path, data: dict[str, Any]) -> Path:
    path = endpoints_dir(home) / f"{data['kind']}-{data['pid']}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(path, data)
    return path


def request_path(home: Path, endpoint_key: str) -> Path:
    return requests_dir(home) / f"{endpoint_key}.json"


def write_request(home: Path, endpoint_key: str, request_id: str, text: str, at: float) -> Path:
    path = request_path(home, endpoint_key)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(path, {"id": request_id, "text": text, "at": at})
    return path


@dataclass(frozen=True)
class WakeRequest:
    """A wake the daemon asks an endpoint to start: ``requests/<endpoint>.json``."""

    id: str | None  # names the acknowledgement (None: a request that wants none)
    text: str  # the message the turn starts with
    at: float | None  # when it was asked (epoch seconds)


@dataclass(frozen=True)
class Ack:
    """An endpoint's acknowledgement of a request: ``acks/<id>.json``."""

    id: str | None
    delivered_at: float | None  # epoch seconds; None when the file does not say
    how: str | None  # e.g. "asyncRewake exit 2"


def take_request(home: Path, endpoint_key: str) -> WakeRequest | None:
    """Claim this endpoint's pending request (rename, then read); None when there is none."""
    path = request_path(home, endpoint_key)
    claimed = path.with_suffix(f".taken-{os.getpid()}")
    try:
        path.rename(claimed)
    except OSError:
        return None
    try:
        data = json.loads(claimed.read_text("utf-8"))
    except (OSError, ValueError):
        data = None
    finally:
        with contextlib.suppress(OSError):
            claimed.unlink()
    if not isinstance(data, dict) or not isinstance(data.get("text"), str):
        return None
    return WakeRequest(_text(data.get("id")), data["text"], _number(data.get("at")))


def withdraw_request(home: Path, endpoint_key: str) -> bool:
    """Take back this endpoint's pending request; False when there is none (it was taken)."""
    path = request_path(home, endpoint_key)
    withdrawn = path.with_suffix(f".withdrawn-{os.getpid()}")
    try:
        path.rename(withdrawn)
    except OSError:
        return False
    with contextlib.suppress(OSError):
        withdrawn.unlink()
    return True


def write_ack(home: Path, request_id: str, how: str, at: float) -> None:
    path = acks_dir(home) / f"{request_id}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(path, {"id": request_id, "delivered_at": at, "how": how})


def read_ack(home: Path, request_id: str) -> Ack | None:
    try:
        data = json.loads((acks_dir(home) / f"{request_id}.json").read_text("utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    return Ack(_text(data.get("id")), _number(data.get("delivered_at")), _text(data.get("how")))
