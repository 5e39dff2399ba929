"""Serve the dashboard: bind first (a port in use is a clear error), then run uvicorn on it.

Ctrl-C and SIGTERM both stop it cleanly: open pages are let go and the process
ends with exit 0 (uvicorn would otherwise raise SIGTERM again after its
shutdown, so the process would end by the signal).
"""

from __future__ import annotations

import errno
import secrets
import signal
import socket
import threading
from dataclasses import dataclass
from typing import Any

from tether.config import Config
from tether.core.errors import UsageError

LOCAL = "127.0.0.1"


@dataclass(frozen=True)
class Bound:
    sock: socket.socket
    host: str
    port: int
    token: str
    once: str  # a one-time code for ``--open``: the token stays out of the browser's argv

    @property
    def origin(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def url(self) -> str:
        return f"{self.origin}/?token={self.token}"

    @property
    def open_url(self) -> str:
        return f"{self.origin}/?once={self.once}"


def bind(host: str, port: int) -> Bound:
    """A listening socket on ``host:port`` (0: any free port) and a fresh token."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise UsageError(
                f"port {port} on {host} is in use; choose another with --port (0: any free port)."
            ) from None
        raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror}.") from None
    sock.listen(64)
    sock.set_inheritable(True)
    return Bound(
        sock, host, sock.getsockname()[1], secrets.token_urlsafe(24), secrets.token_urlsafe(24)
    )


def serve(config: Config, bound: Bound) -> None:
    """Run until interrupted (Ctrl-C, SIGTERM)."""
    import uvicorn

    from tether.dashboard.app import build_app
    from tether.dashboard.security import Listening

    stopping = threading.Event()

    class Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: Any) -> None:
            stopping.set()  # open pages' streams end, so the shutdown does not wait for them
            super().handle_exit(sig, frame)
            if sig == signal.SIGTERM:  # asked to stop: a clean end, not death by the signal
                captured = getattr(self, "_captured_signals", [])
                while signal.SIGTERM in captured:
                    captured.remove(signal.SIGTERM)

    server = Server(
        uvicorn.Config(
            build_app(config, bound.token, Listening(bound.host, bound.port), bound.once, stopping),
            log_level="warning",
            access_log=False,
            lifespan="off",
            timeout_graceful_shutdown=3,
        )
    )
    server.run(sockets=[bound.sock])
