"""Serve the dashboard: bind first (a port in use is a clear error), then run uvicorn on it."""

from __future__ import annotations

import errno
import secrets
import socket
from dataclasses import dataclass

from tether.config import Config
from tether.errors import UsageError

LOCAL = "127.0.0.1"


@dataclass(frozen=True)
class Bound:
    sock: socket.socket
    host: str
    port: int
    token: str

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/?token={self.token}"


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
    return Bound(sock, host, sock.getsockname()[1], secrets.token_urlsafe(24))


def serve(config: Config, bound: Bound) -> None:
    """Run until interrupted (Ctrl-C, SIGTERM)."""
    import uvicorn

    from tether.dashboard.app import build_app

    server = uvicorn.Server(
        uvicorn.Config(
            build_app(config, bound.token),
            log_level="warning",
            access_log=False,
            lifespan="off",
            timeout_graceful_shutdown=1,
        )
    )
    server.run(sockets=[bound.sock])
