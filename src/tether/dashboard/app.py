"""The dashboard's web application (Starlette): read-only pages and JSON, live by SSE.

Every request must carry the token the server printed (``?token=…``); without
it the answer is 403. Only GET routes exist. Live updates: a cheap look at the
store's and the gate's files every ``CHANGE_POLL`` seconds; when they changed
(or ``FULL_REFRESH`` passed) the status object is made again and pushed to each
open page as an ``status`` event.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import (
    FileResponse,
    JSONResponse,
    PlainTextResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from tether.config import Config

STATIC = Path(__file__).parent / "static"
CHANGE_POLL = 0.5  # seconds between looks at the files' times (a few stat calls)
FULL_REFRESH = 15.0  # the status is made again at least this often while a page is open
KEEPALIVE = 20.0
STATIC_FILES = {
    "app.js": "text/javascript",
    "app.css": "text/css",
    "vendor/uPlot.iife.min.js": "text/javascript",
    "vendor/uPlot.min.css": "text/css",
    "vendor/uPlot.LICENSE": "text/plain",
}


class TokenGate:
    """403 for any request whose ``token`` query parameter is not the server's token."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.token = token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = Request(scope).query_params.get("token", "")
            if not hmac.compare_digest(given.encode(), self.token):
                await PlainTextResponse("403: this dashboard needs its token", 403)(
                    scope, receive, send
                )
                return
        await self.app(scope, receive, send)


class State:
    """What the routes share: the configuration and the last status made."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.status: dict[str, Any] | None = None
        self.made_at = 0.0
        self.stamp: tuple[Any, ...] = ()
        self.lock = asyncio.Lock()

    def files_stamp(self) -> tuple[Any, ...]:
        """The times and sizes of the files a change shows up in first."""
        home = self.config.home
        stamp: list[Any] = []
        for name in ("tether.db", "tether.db-wal", "gate.db", "gate.db-wal", "rooms"):
            try:
                info = (home / name).stat()
                stamp.append((info.st_mtime_ns, info.st_size))
            except OSError:
                stamp.append(None)
        return tuple(stamp)

    async def current(self, *, force: bool = False) -> dict[str, Any]:
        async with self.lock:
            stamp = self.files_stamp()
            fresh = time.monotonic() - self.made_at < FULL_REFRESH
            if self.status is not None and stamp == self.stamp and fresh and not force:
                return self.status
            from tether.status.collect import collect

            self.status = await asyncio.to_thread(collect, self.config)
            self.stamp, self.made_at = stamp, time.monotonic()
            return self.status


def _reader(config: Config) -> Any:
    from tether.store.db import connect_reader

    return connect_reader(config.home)


def _json(data: Any, status_code: int = 200) -> Response:
    return JSONResponse(data, status_code=status_code)


def build_app(config: Config, token: str) -> ASGIApp:
    state = State(config)

    def with_conn(
        handler: Callable[[Request, Any], Any],
    ) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            def work() -> Any:
                conn = _reader(config)
                try:
                    return handler(request, conn)
                finally:
                    if conn is not None:
                        conn.close()

            from tether.errors import TetherError

            try:
                return _json(await asyncio.to_thread(work))
            except TetherError as exc:
                return _json({"error": str(exc)}, 404)

        return endpoint

    async def index(request: Request) -> Response:
        return FileResponse(STATIC / "index.html", media_type="text/html")

    async def static(request: Request) -> Response:
        name = request.path_params["name"]
        media = STATIC_FILES.get(name)
        if media is None:  # only the files listed, never a path from the request
            return PlainTextResponse("not found", 404)
        return FileResponse(STATIC / name, media_type=media)

    async def status(request: Request) -> Response:
        return _json(await state.current())

    def runs(request: Request, conn: Any) -> Any:
        from tether.dashboard.data import runs_page

        return runs_page(conn, dict(request.query_params))

    def run(request: Request, conn: Any) -> Any:
        from tether.dashboard.data import run_page
        from tether.errors import RunNotFoundError

        if conn is None:
            raise RunNotFoundError(request.path_params["run_id"])
        return run_page(conn, request.path_params["run_id"], time.time())

    def loop(request: Request, conn: Any) -> Any:
        from tether.dashboard.data import loop_history

        return loop_history(conn, request.query_params.get("board"))

    async def board(request: Request) -> Response:
        from tether.dashboard.data import board_columns

        return _json(await asyncio.to_thread(board_columns, config))

    async def ticket(request: Request) -> Response:
        from tether.dashboard.data import ticket as read_ticket
        from tether.errors import TetherError

        try:
            found = await asyncio.to_thread(read_ticket, config, request.path_params["ticket_id"])
        except (TetherError, KeyError) as exc:
            return _json({"error": str(exc)}, 404)
        return _json(found)

    async def events(request: Request) -> Response:
        async def stream() -> AsyncIterator[str]:
            sent: str | None = None
            last_beat = time.monotonic()
            while True:
                if await request.is_disconnected():
                    return
                data = json.dumps(await state.current(), default=str)
                if data != sent:
                    sent = data
                    last_beat = time.monotonic()
                    yield f"event: status\ndata: {data}\n\n"
                elif time.monotonic() - last_beat > KEEPALIVE:
                    last_beat = time.monotonic()
                    yield ": keepalive\n\n"
                await asyncio.sleep(CHANGE_POLL)

        headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
        return StreamingResponse(stream(), media_type="text/event-stream", headers=headers)

    routes = [
        Route("/", index),
        Route("/static/{name:path}", static),
        Route("/api/status", status),
        Route("/api/runs", with_conn(runs)),
        Route("/api/runs/{run_id}", with_conn(run)),
        Route("/api/loop", with_conn(loop)),
        Route("/api/board", board),
        Route("/api/tickets/{ticket_id}", ticket),
        Route("/events", events),
    ]
    app = Starlette(routes=routes)
    return TokenGate(app, token)
