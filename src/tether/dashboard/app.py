"""The dashboard's web application (Starlette): read-only pages and JSON, live by SSE.

Every request passes the guard first (``security.Guard``: Host check, session
cookie or token, CSRF and Origin for anything but a read, strict headers).
Every JSON answer carries an ETag: a page asking again with ``If-None-Match``
gets a bodiless 304 when nothing changed.

Live updates (``live.py``): while a page is open, one look every half second
at the data's versions (the store's and the gate's files, the board's view,
the events file of each run in progress). When they moved (or
``FULL_REFRESH`` passed) the status object is made again; each open page gets
``status`` when it changed and ``versions`` when they moved, and asks for its
own data only then.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp

from tether.config import Config
from tether.dashboard.live import Live
from tether.dashboard.security import Guard, Listening

STATIC = Path(__file__).parent / "static"
FULL_REFRESH = 15.0  # the status is made again at least this often while a page is open
STATIC_FILES = {
    "app.js": "text/javascript",
    "app.css": "text/css",
    "vendor/uPlot.iife.min.js": "text/javascript",
    "vendor/uPlot.min.css": "text/css",
    "vendor/uPlot.LICENSE": "text/plain",
}


class State:
    """What the routes share: the configuration, the last status made, the data's versions.

    The status is made under ``lock``, one at a time; the board's parse cache
    guards itself; run pages are made one at a time (``tails_lock``).
    """

    def __init__(self, config: Config) -> None:
        from tether.dashboard.runview import Tails

        self.config = config
        self.status: dict[str, Any] | None = None
        self.made_at = 0.0
        self.made_for: tuple[Any, ...] = ()
        self.lock = asyncio.Lock()  # one status made at a time
        self.tails_lock = threading.Lock()
        self.tails = Tails()
        self.pages: dict[str, tuple[Any, bytes]] = {}  # a run's page by its version
        self._board: Any = None
        self._board_view: Any = None
        self.board_version = 0

    def files_stamp(self) -> tuple[Any, ...]:
        """The times and sizes of the files a change shows up in first."""
        from tether.dashboard.runview import file_stamp

        home = self.config.home
        names = ("tether.db", "tether.db-wal", "gate.db", "gate.db-wal", "rooms")
        return tuple(file_stamp(home / name) for name in names)

    def board_stamp(self) -> int:
        """A number that moves whenever the board's view does (a warm load: no parse)."""
        from tether.core.errors import TetherError
        from tether.loop.project_board import board_of, board_root

        if not board_root(self.config).is_dir():
            view = None
        else:
            if self._board is None:  # kept: a new Board checks its folders again
                self._board = board_of(self.config)
            try:
                view = self._board.load()
            except (TetherError, OSError):
                view = self._board_view
        if view is not self._board_view:
            self._board_view = view
            self.board_version += 1
        return self.board_version

    def look(self, *, force: bool = False) -> tuple[dict[str, Any], dict[str, Any]]:
        """The status (made again only when its inputs moved) and the data's versions."""
        from tether.dashboard.runview import file_stamp
        from tether.runs.record import RunPaths

        files = self.files_stamp()
        board = self.board_stamp()
        made_for = (files, board)
        fresh = time.monotonic() - self.made_at < FULL_REFRESH
        if force or self.status is None or made_for != self.made_for or not fresh:
            from tether.status.collect import collect

            self.status = collect(self.config)
            self.made_for, self.made_at = made_for, time.monotonic()
        events = {
            r["id"]: file_stamp(RunPaths(Path(r["run_dir"])).events) for r in self.status["running"]
        }
        versions = {"store": _digest(files), "board": board, "events": events}
        return self.status, versions


def _digest(value: Any) -> str:
    return hashlib.blake2b(repr(value).encode(), digest_size=8).hexdigest()


def json_answer(request: Request, body: bytes, status_code: int = 200) -> Response:
    """JSON with an ETag; 304 without a body when the page already has this answer."""
    etag = f'"{hashlib.blake2b(body, digest_size=12).hexdigest()}"'
    headers = {"etag": etag, "cache-control": "no-cache"}
    if status_code == 200 and etag in request.headers.get("if-none-match", ""):
        return Response(status_code=304, headers=headers)
    return Response(body, status_code, media_type="application/json", headers=headers)


def encode(data: Any) -> bytes:
    return json.dumps(data, default=str, separators=(",", ":")).encode()


def build_app(
    config: Config,
    token: str,
    listening: Listening,
    once: str | None = None,
    stopping: threading.Event | None = None,
) -> ASGIApp:
    """The guarded app; ``stopping`` set ends every open page's stream (a clean shutdown)."""
    state = State(config)
    endpoints = _Endpoints(config, state, Live(state, stopping or threading.Event()))
    return Guard(Starlette(routes=endpoints.routes()), token, listening, once=once)


class _Endpoints:
    """What each route answers; every one shares the app's ``State``."""

    def __init__(self, config: Config, state: State, live: Live) -> None:
        self.config = config
        self.state = state
        self.live = live

    def routes(self) -> list[Route]:
        with_conn = self._with_conn
        return [
            Route("/", self.index),
            Route("/static/{name:path}", self.static),
            Route("/api/session", self.session),
            Route("/api/status", self.status),
            Route("/api/runs", with_conn(self.runs)),
            Route("/api/runs/{run_id}", with_conn(self.run)),
            Route("/api/loop", with_conn(self.loop)),
            Route("/api/board", self.board),
            Route("/api/tickets/{ticket_id}", self.ticket),
            Route("/api/outbox", with_conn(self.outbox)),
            # the only routes that change state: the guard has checked session, Origin and CSRF
            Route("/api/outbox/{proposal_id}/{action}", self.decide, methods=["POST"]),
            Route("/events", self.events),
        ]

    def _with_conn(
        self, handler: Callable[[Request, Any], Any]
    ) -> Callable[[Request], Awaitable[Response]]:
        """A JSON route answered from a read-only connection to the store (``None``: no store)."""
        home = self.config.home

        async def endpoint(request: Request) -> Response:
            from tether.core.errors import TetherError
            from tether.store.state_db import connect_reader

            def work() -> bytes:
                conn = connect_reader(home)
                try:
                    found = handler(request, conn)
                finally:
                    if conn is not None:
                        conn.close()
                return found if isinstance(found, bytes) else encode(found)

            try:
                return json_answer(request, await asyncio.to_thread(work))
            except TetherError as exc:
                return json_answer(request, encode({"error": str(exc)}), 404)

        return endpoint

    async def index(self, request: Request) -> Response:
        return FileResponse(
            STATIC / "index.html", media_type="text/html", headers={"cache-control": "no-store"}
        )

    async def static(self, request: Request) -> Response:
        name = request.path_params["name"]
        media = STATIC_FILES.get(name)
        if media is None:  # only the files listed, never a path from the request
            return PlainTextResponse("not found", 404)
        path = STATIC / name
        answer = FileResponse(
            path, media_type=media, headers={"cache-control": "no-cache"}, stat_result=path.stat()
        )
        if answer.headers["etag"] in request.headers.get("if-none-match", ""):
            return Response(status_code=304, headers={"etag": answer.headers["etag"]})
        return answer

    async def session(self, request: Request) -> Response:
        return json_answer(request, encode({"csrf": request.scope.get("state", {}).get("csrf")}))

    async def status(self, request: Request) -> Response:
        async with self.state.lock:
            found, _ = await asyncio.to_thread(self.state.look)
        return json_answer(request, encode(found))

    def runs(self, request: Request, conn: Any) -> Any:
        from tether.dashboard.data import runs_page

        return runs_page(conn, dict(request.query_params))

    def run(self, request: Request, conn: Any) -> bytes:
        from tether.core.errors import RunNotFoundError
        from tether.dashboard.data import run_page

        state = self.state
        if conn is None:
            raise RunNotFoundError(request.path_params["run_id"])
        with state.tails_lock:  # one run page made at a time: the tails are shared
            return run_page(
                conn, request.path_params["run_id"], time.time(), state.tails, state.pages
            )

    def loop(self, request: Request, conn: Any) -> Any:
        from tether.dashboard.data import loop_history

        return loop_history(conn, request.query_params.get("board"))

    async def board(self, request: Request) -> Response:
        from tether.dashboard.data import board_columns

        found = await asyncio.to_thread(board_columns, self.config)
        return json_answer(request, encode(found))

    async def ticket(self, request: Request) -> Response:
        from tether.core.errors import TetherError
        from tether.dashboard.data import ticket as read_ticket

        try:
            found = await asyncio.to_thread(
                read_ticket, self.config, request.path_params["ticket_id"]
            )
        except (TetherError, KeyError) as exc:
            return json_answer(request, encode({"error": str(exc)}), 404)
        return json_answer(request, encode(found))

    def outbox(self, request: Request, conn: Any) -> Any:
        from tether.dashboard.outbox import proposals

        return proposals(conn)

    async def decide(self, request: Request) -> Response:
        """A person's approve or reject (the guard checked session, Origin and CSRF)."""
        from tether.core.errors import TetherError
        from tether.dashboard.outbox import decide as carry
        from tether.dashboard.outbox import parse_body, refused

        try:
            body = parse_body(await request.body())
            answer = await asyncio.to_thread(
                carry,
                self.config,
                request.path_params["proposal_id"],
                request.path_params["action"],
                body,
            )
        except TetherError as exc:
            status_code, error = refused(exc)
            return json_answer(request, encode(error), status_code)
        return json_answer(request, encode(answer))

    async def events(self, request: Request) -> Response:
        headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
        return StreamingResponse(
            self.live.stream(request), media_type="text/event-stream", headers=headers
        )
