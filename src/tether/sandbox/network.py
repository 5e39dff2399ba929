"""The sandbox's one way out: an allow-list proxy outside it, on a Unix socket.

Inside, the network namespace has only loopback. The launcher there
(``tether.sandbox.launcher``) carries each TCP connection to this proxy over a
Unix socket bound into the sandbox. A connection starts either with an HTTP
proxy request (``CONNECT host:port`` for HTTPS, an absolute ``http://`` URL for
plain HTTP; the agent's ``HTTPS_PROXY``/``HTTP_PROXY`` point at the launcher's
port) or with the launcher's own line ``TETHER-FORWARD host:port`` for an
allowed loopback endpoint (a local model server the agent reaches at its usual
address). A host the run may reach is connected; any other is answered at once
with ``403`` and recorded: no time-out ever decides a refusal.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from tether.sandbox.hosts import Host, allowed

FORWARD_PREAMBLE = b"TETHER-FORWARD "
MAX_HEAD = 64 * 1024
CONNECT_TIMEOUT = 10.0
BUFFER = 65536


@dataclass
class Refusal:
    """A host the sandbox refused, how often, and when first."""

    host: str
    port: int
    first_at: float
    count: int = 1

    def as_dict(self) -> dict[str, object]:
        return {
            "host": self.host,
            "port": self.port,
            "first_at": self.first_at,
            "count": self.count,
        }


class ProxyError(Exception):
    pass


def _split_target(target: str, default_port: int) -> tuple[str, int]:
    if target.startswith("["):
        name, _, rest = target[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else ""
    else:
        name, colon, port = target.rpartition(":")
        if not colon:
            name, port = target, ""
    if port and not port.isdigit():
        raise ProxyError(f"bad port in {target!r}")
    if not name:
        raise ProxyError(f"no host in {target!r}")
    return name.lower().rstrip("."), int(port) if port else default_port


def _pipe(src: socket.socket, dst: socket.socket) -> None:
    try:
        while data := src.recv(BUFFER):
            dst.sendall(data)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)


def _relay(client: socket.socket, upstream: socket.socket) -> None:
    back = threading.Thread(target=_pipe, args=(upstream, client), daemon=True)
    back.start()
    _pipe(client, upstream)
    back.join()


class NetworkProxy:
    """Listens on ``socket_path``; lets through ``hosts`` only; remembers refusals."""

    def __init__(self, hosts: tuple[Host, ...], socket_path: Path) -> None:
        self.hosts = hosts
        self.socket_path = socket_path
        self._listener: socket.socket | None = None
        self._lock = threading.Lock()
        self._refused: dict[tuple[str, int], Refusal] = {}
        self._open: set[socket.socket] = set()

    @property
    def refusals(self) -> list[Refusal]:
        with self._lock:
            return sorted(self._refused.values(), key=lambda r: r.first_at)

    def start(self) -> NetworkProxy:
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(str(self.socket_path))
        listener.listen(64)
        self._listener = listener
        threading.Thread(target=self._accept, daemon=True, name="tether-proxy").start()
        return self

    def stop(self) -> None:
        if self._listener is not None:
            with contextlib.suppress(OSError):
                self._listener.shutdown(socket.SHUT_RDWR)
            self._listener.close()
            self._listener = None
        with self._lock:
            for sock in list(self._open):
                with contextlib.suppress(OSError):
                    sock.close()
            self._open.clear()

    def _accept(self) -> None:
        listener = self._listener
        while listener is not None:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _track(self, sock: socket.socket, add: bool) -> None:
        with self._lock:
            (self._open.add if add else self._open.discard)(sock)

    def _serve(self, client: socket.socket) -> None:
        self._track(client, True)
        try:
            self._handle(client)
        except (OSError, ProxyError, UnicodeDecodeError) as exc:
            with contextlib.suppress(OSError):
                client.sendall(_response(400, f"tether sandbox: bad proxy request ({exc})"))
        finally:
            self._track(client, False)
            with contextlib.suppress(OSError):
                client.close()

    def _handle(self, client: socket.socket) -> None:
        client.settimeout(30)
        head = b""
        while b"\r\n\r\n" not in head and not (head.startswith(FORWARD_PREAMBLE) and b"\n" in head):
            chunk = client.recv(BUFFER)
            if not chunk:
                return
            head += chunk
            if len(head) > MAX_HEAD:
                raise ProxyError("request head too large")
        client.settimeout(None)
        if head.startswith(FORWARD_PREAMBLE):
            line, _, rest = head.partition(b"\n")
            name, port = _split_target(line[len(FORWARD_PREAMBLE) :].decode().strip(), 0)
            self._through(client, name, port, rest, reply=None)
            return
        first, _, rest_of_head = head.partition(b"\r\n")
        method, target, version = first.decode("latin-1").split(" ", 2)
        if method.upper() == "CONNECT":
            name, port = _split_target(target, 443)
            body = head.partition(b"\r\n\r\n")[2]
            reply = f"{version} 200 Connection established\r\n\r\n".encode()
            self._through(client, name, port, body, reply=reply)
            return
        if not target.lower().startswith("http://"):
            raise ProxyError(f"{method} {target[:80]!r} is neither CONNECT nor an http:// URL")
        authority, slash, path = target[7:].partition("/")
        name, port = _split_target(authority, 80)
        request = f"{method} /{path if slash else ''} {version}\r\n".encode() + _headers(
            rest_of_head
        )
        self._through(client, name, port, request, reply=None)

    def _through(
        self, client: socket.socket, name: str, port: int, first: bytes, reply: bytes | None
    ) -> None:
        if not allowed(self.hosts, name, port):
            self._refuse(name, port)
            client.sendall(
                _response(
                    403,
                    f"tether sandbox: {name}:{port} is not an allowed host for this run "
                    "(allow it with [sandbox] allow_hosts in tether.toml)",
                )
            )
            return
        try:
            upstream = socket.create_connection((name, port), timeout=CONNECT_TIMEOUT)
        except OSError as exc:
            client.sendall(_response(502, f"tether sandbox: cannot reach {name}:{port}: {exc}"))
            return
        upstream.settimeout(None)
        self._track(upstream, True)
        try:
            if reply is not None:
                client.sendall(reply)
            if first:
                upstream.sendall(first)
            _relay(client, upstream)
        finally:
            self._track(upstream, False)
            upstream.close()

    def _refuse(self, name: str, port: int) -> None:
        with self._lock:
            known = self._refused.get((name, port))
            if known is None:
                self._refused[(name, port)] = Refusal(name, port, time.time())
            else:
                known.count += 1


def _headers(rest_of_head: bytes) -> bytes:
    """The request's headers for the origin server: no proxy headers, one request only."""
    lines = rest_of_head.split(b"\r\n")
    end = lines.index(b"") if b"" in lines else len(lines)
    kept = [
        line
        for line in lines[:end]
        if line.split(b":", 1)[0].strip().lower()
        not in (b"proxy-connection", b"proxy-authorization", b"connection", b"keep-alive")
    ]
    body = b"\r\n".join(lines[end + 1 :])
    return b"\r\n".join([*kept, b"Connection: close", b"", b""]) + body


def _response(code: int, text: str) -> bytes:
    reason = {400: "Bad Request", 403: "Forbidden", 502: "Bad Gateway"}[code]
    body = (text + "\n").encode()
    return (
        f"HTTP/1.1 {code} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode() + body
