"""The scripted model server: plain HTTP on 127.0.0.1, one thread per connection.

It answers the three wire protocols the agent CLIs speak, on their usual paths
under any prefix (``/v1/responses``, ``/v1/chat/completions``,
``/v1/messages``), and embeddings (``/v1/embeddings``, scripted vectors:
:mod:`.embeddings`); it follows a :class:`~.scenario.Scenario` and logs every
request (:mod:`.request_log`). It keeps no conversation state: the step comes from the
tool-call ids the client echoes back.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any

from tether.testing.model_server.anthropic import ANTHROPIC
from tether.testing.model_server.chat import CHAT
from tether.testing.model_server.embeddings import ScriptedEmbeddings
from tether.testing.model_server.request_log import (
    LogSummary,
    RequestLog,
    RequestRecord,
    ServedCallRecord,
    summarize,
)
from tether.testing.model_server.responses import RESPONSES
from tether.testing.model_server.scenario import (
    FinalText,
    NamedCall,
    Scenario,
    ShellCalls,
    matches_tool,
    new_call_id,
    new_response_id,
    next_step,
    parse_scenario,
)
from tether.testing.model_server.shell_tool import choose_shell_tool, shell_arguments
from tether.testing.model_server.wire import (
    BadRequestError,
    ParsedRequest,
    Reply,
    ServedCall,
    WireApi,
    estimate_tokens,
)

HOST = "127.0.0.1"
DEFAULT_MODEL = "mock-model"
OUTPUT_TOKENS = 12

# path suffix -> protocol (``…/messages/count_tokens`` is answered before these)
_ROUTES: tuple[tuple[str, WireApi], ...] = (
    ("/chat/completions", CHAT),
    ("/responses", RESPONSES),
    ("/messages", ANTHROPIC),
)


class _Httpd(ThreadingHTTPServer):
    daemon_threads = True
    owner: ModelServer


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Httpd

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the request log is the record."""

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        self.server.owner._record_other("GET", self.path)
        if path.endswith("/models"):
            model = {"id": DEFAULT_MODEL, "object": "model", "owned_by": "tether"}
            self._send_json(200, {"object": "list", "data": [model]})
        else:
            self._send_json(404, {"error": {"message": f"no such path: {path}"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length > 0 else b""
        path = self.path.split("?", 1)[0].rstrip("/")
        owner = self.server.owner
        if path.endswith("/count_tokens"):
            owner._record_other("POST", self.path)
            self._send_json(200, {"input_tokens": estimate_tokens(body)})
            return
        if path.endswith("/embeddings"):
            owner._record_other("POST", self.path, protocol="embeddings")
            self._send_json(*owner.embeddings.answer(body))
            return
        api = next((api for suffix, api in _ROUTES if path.endswith(suffix)), None)
        if api is None:
            owner._record_other("POST", self.path)
            self._send_json(404, {"error": {"message": f"no such path: {path}"}})
            return
        try:
            parsed = api.parse(body)
        except BadRequestError as exc:
            owner._record_other("POST", self.path, protocol=api.name)
            self._send_json(400, {"error": {"type": "invalid_request_error", "message": str(exc)}})
            return
        if owner.keep_bodies:
            owner.bodies.append(body)
        reply = owner._answer(api, parsed, self.path, estimate_tokens(body))
        if not owner._think():
            self.close_connection = True  # the server is stopping: drop it unanswered
            return
        if parsed.stream:
            self._send(200, "text/event-stream", api.render_stream(reply))
        else:
            self._send_json(200, api.render_json(reply))

    def _send_json(self, status: int, data: Any) -> None:
        self._send(status, "application/json", json.dumps(data).encode())

    def _send(self, status: int, content_type: str, payload: bytes) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(payload)))
            self.send_header("Cache-Control", "no-cache")
            self.end_headers()
            self.wfile.write(payload)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            # The client went away (killed mid-request); its request is on record.
            self.close_connection = True


class ModelServer:
    """A scripted model on ``127.0.0.1`` for running agent CLIs offline.

    Use it as a context manager::

        with ModelServer("five-steps") as server:
            ...  # point a CLI at server.base_url, run it
            assert server.model_calls == 5

    ``think`` delays every answer by that many seconds (after the request is
    logged); ``log_path`` also writes the request log as JSONL; ``keep_bodies``
    keeps each model request's raw body in ``bodies``.
    """

    def __init__(
        self,
        scenario: str | Scenario = "five-steps",
        *,
        think: float = 0.0,
        log_path: Path | str | None = None,
        port: int = 0,
        keep_bodies: bool = False,
        embeddings: ScriptedEmbeddings | None = None,
    ) -> None:
        if think < 0:
            raise ValueError(f"think must be >= 0 seconds, got {think}")
        self.scenario = parse_scenario(scenario) if isinstance(scenario, str) else scenario
        self.think = think
        self._log_path = log_path
        self._requested_port = port
        # the raw bodies of agent requests, for tests that read what a client sent
        self.keep_bodies = keep_bodies
        self.bodies: list[bytes] = []
        # ``POST …/embeddings``: scripted vectors (tether.testing.model_server.embeddings)
        self.embeddings = embeddings or ScriptedEmbeddings()
        self._log: RequestLog | None = None
        self._httpd: _Httpd | None = None
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self._changed = threading.Condition()

    # -- lifecycle -------------------------------------------------------------

    def start(self) -> ModelServer:
        if self._httpd is not None:
            raise RuntimeError("the model server is already running")
        self._stopping.clear()
        httpd = _Httpd((HOST, self._requested_port), _Handler)
        try:
            self._log = RequestLog(self._log_path)
        except OSError:
            httpd.server_close()
            raise
        httpd.owner = self
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        self._stopping.set()
        httpd.shutdown()
        httpd.server_close()
        if self._thread is not None:
            self._thread.join()
        if self._log is not None:
            self._log.close()

    def __enter__(self) -> ModelServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- what tests and users read ----------------------------------------------

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("the model server is not running; call start() first")
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>`` (OpenAI-style clients want ``base_url + "/v1"``)."""
        return f"http://{HOST}:{self.port}"

    @property
    def requests(self) -> list[RequestRecord]:
        """Every request so far, in arrival order (a snapshot)."""
        return self._log.records if self._log is not None else []

    @property
    def model_calls(self) -> int:
        """Agent model requests so far (side calls and other paths excluded)."""
        return sum(1 for r in self.requests if r.kind == "agent")

    def summary(self) -> LogSummary:
        return summarize(self.requests)

    def wait_until(
        self, predicate: Callable[[list[RequestRecord]], bool], timeout: float = 10.0
    ) -> bool:
        """Block until ``predicate(requests)`` holds or ``timeout`` passes; the outcome."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while not predicate(self.requests):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._changed.wait(left)
        return True

    # -- called by the handler ---------------------------------------------------

    def _think(self) -> bool:
        """Wait the think time; False when the server is stopping meanwhile."""
        if self.think > 0:
            return not self._stopping.wait(self.think)
        return not self._stopping.is_set()

    def _append(self, build: Callable[[int], RequestRecord]) -> RequestRecord:
        assert self._log is not None
        record = self._log.append(build)
        with self._changed:
            self._changed.notify_all()
        return record

    def _record_other(self, method: str, path: str, protocol: str = "none") -> None:
        self._append(
            lambda seq: RequestRecord(seq, round(time.time(), 3), method, path, protocol, "other")
        )

    def _answer(self, api: WireApi, req: ParsedRequest, path: str, input_tokens: int) -> Reply:
        model = req.model or DEFAULT_MODEL
        reply_id = new_response_id(api.response_prefix)
        step: int | None = None
        calls: tuple[ServedCall, ...] = ()
        text: str | None
        if not req.tools:
            kind, action, text = "side", "text", "OK"
        else:
            kind = "agent"
            step = (
                req.assistant_turns + 1
                if self.scenario.by_turns
                else next_step(req.echoed_call_ids)
            )
            scripted = self.scenario.action(step)
            tool = choose_shell_tool(req.tools) if isinstance(scripted, ShellCalls) else None
            if isinstance(scripted, ShellCalls) and tool is not None:
                action, text = "tool_calls", None
                calls = tuple(
                    ServedCall(
                        new_call_id(api.call_prefix, step, k),
                        tool.name,
                        shell_arguments(tool, cmd, step),
                    )
                    for k, cmd in enumerate(scripted.commands)
                )
            elif isinstance(scripted, NamedCall):
                named = next(
                    (t for t in req.tools if t.qualified == scripted.name),
                    next((t for t in req.tools if matches_tool(t.qualified, scripted.name)), None),
                )
                if named is None:
                    offered = ", ".join(req.tool_names)
                    action = "no_such_tool"
                    text = f"No tool named {scripted.name} among the tools offered: {offered}"
                else:
                    action, text = "tool_calls", None
                    call_id = new_call_id(api.call_prefix, step, 0)
                    arguments = dict(scripted.arguments)
                    calls = (ServedCall(call_id, named.name, arguments, named.namespace),)
            elif isinstance(scripted, FinalText):
                action, text = "text", scripted.text
            else:
                offered = ", ".join(req.tool_names)
                action, text = "no_shell_tool", f"No shell tool among the tools offered: {offered}"
        self._append(
            lambda seq: RequestRecord(
                seq=seq,
                t=round(time.time(), 3),
                method="POST",
                path=path,
                protocol=api.name,
                kind=kind,
                model=req.model,
                stream=req.stream,
                step=step,
                action=action,
                tool_calls=tuple(
                    ServedCallRecord(c.call_id, c.qualified, c.arguments) for c in calls
                ),
                tool_names=tuple(req.tool_names),
                tools_offered=len(req.tools),
                tool_results_in_history=req.tool_results,
                parallel_tool_calls=req.parallel_tool_calls,
                input_tokens=input_tokens,
                output_tokens=OUTPUT_TOKENS,
            )
        )
        return Reply(reply_id, model, calls, text, input_tokens, OUTPUT_TOKENS)
