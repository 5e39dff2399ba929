"""A minimal MCP client over stdio (JSON-RPC lines), for tests and benchmarks.

It speaks the initialize handshake, ``tools/list`` and ``tools/call`` and
nothing else, without the ``mcp`` SDK: what it measures and checks is the
server, not a client library.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import IO, Any

PROTOCOL_VERSION = "2025-06-18"


class McpError(RuntimeError):
    """The server answered a request with a JSON-RPC error."""


class StdioClient:
    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: Path | str | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.proc = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=None if env is None else dict(env),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self._next_id = 0
        self.server_info: dict[str, Any] = {}

    def _pipe_in(self) -> IO[bytes]:
        assert self.proc.stdin is not None
        return self.proc.stdin

    def send(self, message: Mapping[str, Any]) -> None:
        pipe = self._pipe_in()
        pipe.write(json.dumps(message).encode() + b"\n")
        pipe.flush()

    def request(self, method: str, params: Mapping[str, Any] | None = None) -> Any:
        self._next_id += 1
        ident = self._next_id
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": ident, "method": method}
        if params is not None:
            message["params"] = dict(params)
        self.send(message)
        assert self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline()
            if not line:
                err = self.proc.stderr.read().decode() if self.proc.stderr else ""
                raise McpError(f"the server closed its output; stderr: {err[-2000:]}")
            reply = json.loads(line)
            if reply.get("id") != ident:
                continue  # a notification or a log message
            if "error" in reply:
                raise McpError(json.dumps(reply["error"]))
            return reply["result"]

    def initialize(self) -> dict[str, Any]:
        result = self.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "tether-test", "version": "0"},
            },
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        self.server_info = result
        return dict(result)

    def list_tools(self) -> list[dict[str, Any]]:
        return list(self.request("tools/list")["tools"])

    def call(self, name: str, arguments: Mapping[str, Any] | None = None) -> dict[str, Any]:
        return dict(self.request("tools/call", {"name": name, "arguments": dict(arguments or {})}))

    def close(self) -> int:
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            self.proc.stdin.close()
        try:
            return self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait(10)
        finally:
            for pipe in (self.proc.stdout, self.proc.stderr):
                if pipe is not None:
                    pipe.close()

    def __enter__(self) -> StdioClient:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
