"""Live updates: one look at the data for all open pages, pushed as server-sent events.

While at least one page is open, one task looks every ``CHANGE_POLL`` seconds
(``State.look``: a few ``stat`` calls, a warm board load; the status is made
again only when its inputs moved). Each open page's stream sends ``status``
when the status changed and ``versions`` when the data's versions moved; the
page then asks for its own data. With two tabs open the work is done once.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import AsyncIterator
from typing import Any, Protocol

from starlette.requests import Request

CHANGE_POLL = 0.5  # seconds between looks at the data's versions
KEEPALIVE = 20.0
CHECK_GONE = 1.0  # how often a waiting stream checks that its page is still there


class Looks(Protocol):
    lock: asyncio.Lock

    def look(self) -> tuple[dict[str, Any], dict[str, Any]]: ...


class Live:
    def __init__(self, state: Looks, stop: threading.Event) -> None:
        self.state = state
        self.stop = stop
        self.messages: dict[str, str] = {}
        self.seq = 0
        self.changed = asyncio.Event()
        self.pages = 0
        self.task: asyncio.Task[None] | None = None
        self._status: dict[str, Any] | None = None  # the object last encoded

    async def _poll(self) -> None:
        while self.pages and not self.stop.is_set():
            async with self.state.lock:
                found, versions = await asyncio.to_thread(self.state.look)
            # the status is encoded again only when it was made again (the same object
            # otherwise): an open page with nothing changing costs a few stat calls
            status = self.messages.get("status", "")
            if found is not self._status:
                self._status, status = found, json.dumps(found, default=str)
            fresh = {"status": status, "versions": json.dumps(versions, default=str)}
            if fresh != self.messages:
                self.messages = fresh
                self.seq += 1
                self.changed.set()
                self.changed = asyncio.Event()
            await asyncio.sleep(CHANGE_POLL)

    async def stream(self, request: Request) -> AsyncIterator[str]:
        self.pages += 1
        if self.task is None or self.task.done():
            self.task = asyncio.create_task(self._poll())
        sent: dict[str, str] = {}
        last_beat = time.monotonic()
        try:
            while not self.stop.is_set():
                for name, data in self.messages.items():
                    if sent.get(name) != data:
                        sent[name] = data
                        last_beat = time.monotonic()
                        yield f"event: {name}\ndata: {data}\n\n"
                if time.monotonic() - last_beat > KEEPALIVE:
                    last_beat = time.monotonic()
                    yield ": keepalive\n\n"
                try:
                    await asyncio.wait_for(self.changed.wait(), CHECK_GONE)
                except TimeoutError:
                    if await request.is_disconnected():
                        return
        finally:
            self.pages -= 1
