"""Codex's hook trust, asked of Codex itself (``codex app-server``).

Codex (0.171) runs a hook from a ``hooks.json`` only when its user
``config.toml`` holds ``[hooks.state."<file>:<event>:<group>:<handler>"]``
with a ``trusted_hash`` equal to the hook's current hash; anything else is
skipped without a word. Rather than copy Codex's hashing, tether asks Codex:
``hooks/list`` says which hooks load in a folder and the trust of each, and
``config/batchWrite`` records trust the way Codex's own ``/hooks`` review does.
Only tether's gate entries are ever trusted here; the user's other hooks stay
as they are. Standard library only, like the rest of the gate package (this
module is not on the hook's path: ``tether hooks trust`` and ``tether doctor``
use it).
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import time
from collections.abc import Mapping
from typing import Any, NamedTuple

from tether.gate.hook_command import is_ours

TIMEOUT_S = 30.0


class CodexTrustError(Exception):
    """Codex's app server could not be asked (missing, failed, or answered an error)."""


class CodexHook(NamedTuple):
    """One hook Codex would load in a folder, as ``hooks/list`` reports it."""

    key: str  # "<hooks.json>:<event>:<group>:<handler>"
    event: str
    command: str | None
    source: str  # "project", "user", ...
    source_path: str
    trust: str  # "trusted", "untrusted", "modified", "managed"
    current_hash: str
    enabled: bool

    @property
    def ours(self) -> bool:
        return is_ours(self.command)


class _AppServer:
    def __init__(self, codex: str, cwd: str, env: Mapping[str, str], timeout: float) -> None:
        self.deadline = time.monotonic() + timeout
        try:
            self.proc = subprocess.Popen(
                [codex, "app-server"],
                cwd=cwd,
                env=dict(env),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError as exc:
            raise CodexTrustError(f"cannot start {codex} app-server: {exc}") from None
        self.buffer = b""
        self.next_id = 0

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                stream.close()

    def _line(self) -> bytes:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buffer:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise CodexTrustError("codex app-server did not answer in time")
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                raise CodexTrustError(
                    f"codex app-server ended before it answered (exit {self.proc.wait()})"
                )
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(json.dumps(message).encode() + b"\n")
            self.proc.stdin.flush()
        except OSError as exc:
            raise CodexTrustError(f"codex app-server stopped reading: {exc}") from None

    def call(self, method: str, params: dict[str, Any]) -> Any:
        ident = self.next_id
        self.next_id += 1
        self.send({"id": ident, "method": method, "params": params})
        while True:
            try:
                answer = json.loads(self._line())
            except ValueError:
                continue  # a line that is not JSON-RPC (a log line)
            if not isinstance(answer, dict) or answer.get("id") != ident or "method" in answer:
                continue  # a notification or a request of the server's own
            if "error" in answer:
                error = answer["error"]
                text = error.get("message") if isinstance(error, dict) else error
                raise CodexTrustError(f"codex app-server: {method} failed: {text}")
            return answer.get("result")


def _session(codex: str, cwd: str, env: Mapping[str, str], timeout: float) -> _AppServer:
    server = _AppServer(codex, cwd, env, timeout)
    try:
        server.call("initialize", {"clientInfo": {"name": "tether", "version": "1"}})
        server.send({"method": "initialized"})
    except BaseException:
        server.close()
        raise
    return server


def _hooks(server: _AppServer, cwd: str) -> list[CodexHook]:
    result = server.call("hooks/list", {"cwds": [cwd]})
    found: list[CodexHook] = []
    entries = result.get("data", []) if isinstance(result, dict) else []
    for entry in entries:
        for hook in entry.get("hooks", []) if isinstance(entry, dict) else []:
            if not isinstance(hook, dict) or not isinstance(hook.get("key"), str):
                continue
            command = hook.get("command")
            found.append(
                CodexHook(
                    key=hook["key"],
                    event=str(hook.get("eventName", "")),
                    command=command if isinstance(command, str) else None,
                    source=str(hook.get("source", "")),
                    source_path=str(hook.get("sourcePath", "")),
                    trust=str(hook.get("trustStatus", "")),
                    current_hash=str(hook.get("currentHash", "")),
                    enabled=bool(hook.get("enabled", True)),
                )
            )
    return found


def list_hooks(
    codex: str, cwd: str, env: Mapping[str, str] | None = None, timeout: float = TIMEOUT_S
) -> list[CodexHook]:
    """The hooks Codex loads in ``cwd`` (``env`` decides which ``CODEX_HOME``)."""
    server = _session(codex, cwd, os.environ if env is None else env, timeout)
    try:
        return _hooks(server, cwd)
    finally:
        server.close()


def trust_gate_hooks(
    codex: str,
    cwd: str,
    env: Mapping[str, str] | None = None,
    scope: str | None = None,
    timeout: float = TIMEOUT_S,
) -> list[CodexHook]:
    """Record Codex's trust for tether's gate hooks that load in ``cwd``.

    Only hooks whose command runs ``tether-gate hook`` (and, given ``scope``,
    only those of that source) are trusted, with the hash Codex reports for
    them now. Returns the hooks that were not trusted before.
    """
    server = _session(codex, cwd, os.environ if env is None else env, timeout)
    try:
        hooks = [h for h in _hooks(server, cwd) if h.ours and (scope is None or h.source == scope)]
        todo = [h for h in hooks if h.trust in ("untrusted", "modified") and h.current_hash]
        if todo:
            value = {h.key: {"trusted_hash": h.current_hash} for h in todo}
            edit = {"keyPath": "hooks.state", "mergeStrategy": "upsert", "value": value}
            server.call("config/batchWrite", {"edits": [edit]})
        return todo
    finally:
        server.close()


def trust_project(
    codex: str, cwd: str, env: Mapping[str, str] | None = None, timeout: float = TIMEOUT_S
) -> None:
    """Record ``trust_level = "trusted"`` for the project ``cwd`` (what ``codex exec
    --trust`` saves), so Codex loads its ``.codex`` folder, hooks included."""
    server = _session(codex, cwd, os.environ if env is None else env, timeout)
    try:
        value = {os.path.abspath(cwd): {"trust_level": "trusted"}}
        edit = {"keyPath": "projects", "mergeStrategy": "upsert", "value": value}
        server.call("config/batchWrite", {"edits": [edit]})
    finally:
        server.close()
