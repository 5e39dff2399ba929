"""The dashboard's guard: who may ask (Host, session), and what every answer forbids.

Every request passes here before any route:

1. **Host check.** The ``Host`` header must name this server: its own address
   and port, or ``localhost`` when it listens on loopback; a server listening on
   every interface takes any IP literal (a DNS name there could be a rebinding
   attack's; an IP literal cannot). Else 421.
2. **A session.** The printed URL's ``?token=`` is exchanged for a session
   cookie (HttpOnly, SameSite=Strict, one per port) by a redirect to the same
   page without the token, so the token leaves the address bar and the
   history. API requests may instead carry the token (``?token=`` or
   ``Authorization: Bearer``) for scripts. ``tether dashboard --open`` hands
   the browser a one-time code instead (``?once=``, good for one exchange in
   the first minutes), so the token never appears in a process's arguments.
   Else 403.
3. **Unsafe methods** (POST and the like) need the session cookie, an
   ``Origin`` equal to the dashboard's own, and the session's CSRF token in the
   ``X-CSRF-Token`` header (the page reads it from ``/api/session``). A route
   that changes state is then an ordinary Starlette route: the guard has
   checked it already. Else 403.
4. **Headers on every answer**: a Content-Security-Policy that lets the page
   load nothing from anywhere but this server (no remote image, script, style,
   font or frame, no inline script or style), ``Referrer-Policy: no-referrer``,
   ``X-Content-Type-Options: nosniff``, ``X-Frame-Options: DENY``.
"""

from __future__ import annotations

import hmac
import ipaddress
import secrets
import time
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from urllib.parse import parse_qsl, urlencode

from starlette.datastructures import Headers
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; manifest-src 'self'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'; frame-src 'none'"
)
HEADERS = (
    (b"content-security-policy", CSP.encode()),
    (b"referrer-policy", b"no-referrer"),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
)
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
CSRF_HEADER = "x-csrf-token"
MAX_SESSIONS = 64  # the oldest goes first; a browser that lost its session uses the URL again
ONCE_SECONDS = 300.0  # how long the one-time code of --open stays good


@dataclass
class Sessions:
    """Session cookie values and each one's CSRF token (in memory: a restart logs out)."""

    tokens: dict[str, str] = field(default_factory=dict)

    def start(self) -> str:
        session = secrets.token_urlsafe(32)
        self.tokens[session] = secrets.token_urlsafe(32)
        while len(self.tokens) > MAX_SESSIONS:
            del self.tokens[next(iter(self.tokens))]
        return session

    def csrf(self, session: str | None) -> str | None:
        return None if session is None else self.tokens.get(session)


def _same(given: str | None, expected: str) -> bool:
    return given is not None and hmac.compare_digest(given.encode(), expected.encode())


@dataclass(frozen=True)
class Listening:
    """Where the server listens: what a request's ``Host`` may name."""

    host: str
    port: int

    @property
    def origin(self) -> str:
        shown = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{shown}:{self.port}"

    def allows(self, host_header: str | None) -> bool:
        if not host_header:
            return False
        name, port = _split_host(host_header)
        if port != self.port:
            return False
        bound = ipaddress.ip_address(self.host)
        if name == "localhost":
            return bound.is_loopback
        try:
            asked = ipaddress.ip_address(name)
        except ValueError:
            return False  # a DNS name: could be a rebinding attack's
        return bound.is_unspecified or asked == bound

    def origins(self, host_header: str) -> set[str]:
        """The origins a page of this server has when it was loaded through ``Host``."""
        return {self.origin, f"http://{host_header}"}


def _split_host(header: str) -> tuple[str, int | None]:
    header = header.strip().lower()
    if header.startswith("["):
        name, _, rest = header[1:].partition("]")
        port = rest.removeprefix(":")
    else:
        name, _, port = header.rpartition(":") if ":" in header else (header, "", "")
    return name, int(port) if port.isdigit() else None


class Guard:
    """The ASGI middleware in front of every route (see the module's docstring)."""

    def __init__(
        self, app: ASGIApp, token: str, listening: Listening, once: str | None = None
    ) -> None:
        self.app = app
        self.token = token
        self.listening = listening
        self.sessions = Sessions()
        self.cookie = f"tether_session_{listening.port}"
        self.once = once
        self.once_until = time.monotonic() + ONCE_SECONDS

    def _once(self, given: str | None) -> bool:
        """The --open code: good for one exchange, in the first minutes only."""
        if self.once is None or time.monotonic() > self.once_until or not _same(given, self.once):
            return False
        self.once = None  # used up
        return True

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        send = _with_headers(send)
        headers = Headers(scope=scope)
        host = headers.get("host")
        if not self.listening.allows(host):
            await PlainTextResponse("421: not this dashboard's address", 421)(scope, receive, send)
            return
        session = self._session(headers)
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        if scope["path"] == "/" and "once" in query and self._once(query.get("once")):
            await self._exchange(scope, receive, send, query)
            return
        if "token" in query and scope["method"] == "GET" and _same(query["token"], self.token):
            if scope["path"] == "/":  # the printed URL: trade the token for a cookie
                await self._exchange(scope, receive, send, query)
                return
            session = session or "token"
        elif session is None and _same(_bearer(headers), self.token):
            session = "token"
        if session is None:
            await PlainTextResponse("403: this dashboard needs its token", 403)(
                scope, receive, send
            )
            return
        if scope["method"] not in SAFE_METHODS and not self._post_allowed(headers, session, host):
            await PlainTextResponse("403: cross-site or unchecked request", 403)(
                scope, receive, send
            )
            return
        scope.setdefault("state", {})["csrf"] = self.sessions.csrf(session)
        await self.app(scope, receive, send)

    def _session(self, headers: Headers) -> str | None:
        jar = SimpleCookie()
        try:
            jar.load(headers.get("cookie", ""))
        except Exception:
            return None
        morsel = jar.get(self.cookie)
        value = morsel.value if morsel is not None else None
        return value if value is not None and self.sessions.csrf(value) is not None else None

    def _post_allowed(self, headers: Headers, session: str, host: str | None) -> bool:
        """An unsafe method: a real session (not a bare token), this very origin, its CSRF."""
        csrf = self.sessions.csrf(session)
        origin = headers.get("origin")
        return (
            csrf is not None
            and origin is not None
            and host is not None
            and origin in self.listening.origins(host)
            and _same(headers.get(CSRF_HEADER), csrf)
        )

    async def _exchange(
        self, scope: Scope, receive: Receive, send: Send, query: dict[str, str]
    ) -> None:
        rest = urlencode({k: v for k, v in query.items() if k not in ("token", "once")})
        response: Response = RedirectResponse("/" + (f"?{rest}" if rest else ""), 303)
        response.set_cookie(
            self.cookie, self.sessions.start(), httponly=True, samesite="strict", path="/"
        )
        response.headers["cache-control"] = "no-store"
        await response(scope, receive, send)


def _bearer(headers: Headers) -> str | None:
    value = headers.get("authorization", "")
    return value[7:] if value.lower().startswith("bearer ") else None


def _with_headers(send: Send) -> Send:
    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            message["headers"] = [*message.get("headers", []), *HEADERS]
        await send(message)

    return sending
