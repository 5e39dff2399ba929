"""A local HTTP service that counts who reached it: a place a sandboxed agent must not call."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import ClassVar


class _Service(http.server.BaseHTTPRequestHandler):
    hits: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        self.hits.append(self.path)
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"secret")

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def serving() -> Iterator[tuple[int, list[str]]]:
    """(port on 127.0.0.1, the paths asked for so far) while the service runs."""
    hits: list[str] = []
    handler = type("Service", (_Service,), {"hits": hits})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_address[1], hits
    finally:
        server.shutdown()
        server.server_close()
