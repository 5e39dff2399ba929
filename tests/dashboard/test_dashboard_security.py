"""The dashboard's guard over plain HTTP against a real server: Host, session, headers, POST.

Raw requests (``http.client``) so that every header is the test's own: a DNS
rebinding attack's ``Host``, a cross-site ``Origin``, a cookie that is not a
session, a stale ETag.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from tests.dashboard.support import Dashboard, start_dashboard
from tests.status.world import World

from tether.dashboard.security import CSP


@pytest.fixture
def dashboard(reading_dashboard: Dashboard) -> Dashboard:
    """The module's one dashboard: no test here changes it (each has a session of its own);
    the two that stop a dashboard start their own."""
    return reading_dashboard


def request(
    dashboard: Dashboard, method: str, path: str, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], bytes]:
    parts = urlsplit(dashboard.base)
    conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=10)
    try:
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        sent = {"Host": parts.netloc, **(headers or {})}
        for name, value in sent.items():
            conn.putheader(name, value)
        conn.endheaders()
        answer = conn.getresponse()
        return answer.status, {k.lower(): v for k, v in answer.getheaders()}, answer.read()
    finally:
        conn.close()


def session(dashboard: Dashboard) -> tuple[str, str]:
    """Trade the token for a session cookie, as a browser does; the cookie and the CSRF token."""
    code, headers, _ = request(dashboard, "GET", f"/?token={dashboard.token}")
    assert code == 303 and headers["location"] == "/"
    cookie = headers["set-cookie"].split(";", 1)[0]
    code, _, body = request(dashboard, "GET", "/api/session", {"Cookie": cookie})
    assert code == 200
    return cookie, json.loads(body)["csrf"]


def test_every_answer_forbids_loading_anything_from_elsewhere(dashboard: Dashboard) -> None:
    for path, expected in (
        ("/", 303),
        ("/api/status", 403),
        (f"/api/status?token={dashboard.token}", 200),
        (f"/nowhere?token={dashboard.token}", 404),
        (f"/static/app.js?token={dashboard.token}", 200),
    ):
        code, headers, _ = request(
            dashboard, "GET", path if path != "/" else f"/?token={dashboard.token}"
        )
        assert code == expected, path
        assert headers["content-security-policy"] == CSP
        assert headers["referrer-policy"] == "no-referrer"
        assert headers["x-content-type-options"] == "nosniff"
        assert headers["x-frame-options"] == "DENY"
    for directive in (
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "frame-ancestors 'none'",
    ):
        assert directive in CSP
    assert "unsafe-inline" not in CSP and "http:" not in CSP and "*" not in CSP


def test_a_host_that_is_not_this_server_is_refused(dashboard: Dashboard) -> None:
    """A DNS rebinding page reaches 127.0.0.1 under its own name: refused before the token."""
    port = urlsplit(dashboard.base).port
    path = f"/api/status?token={dashboard.token}"
    for host in (f"evil.example:{port}", f"127.0.0.1.nip.io:{port}", "127.0.0.1:1", ""):
        code, headers, _ = request(dashboard, "GET", path, {"Host": host})
        assert code == 421, host
        assert headers["content-security-policy"] == CSP
    assert request(dashboard, "GET", path, {"Host": f"localhost:{port}"})[0] == 200
    assert request(dashboard, "GET", path, {"Host": f"127.0.0.1:{port}"})[0] == 200


def test_the_token_is_traded_once_for_an_httponly_samesite_cookie(dashboard: Dashboard) -> None:
    code, headers, _ = request(dashboard, "GET", f"/?token={dashboard.token}&x=1")
    assert code == 303 and headers["location"] == "/?x=1"  # the token leaves the address
    cookie = headers["set-cookie"]
    name_value, *flags = [part.strip() for part in cookie.split(";")]
    assert name_value.startswith(f"tether_session_{urlsplit(dashboard.base).port}=")
    assert dashboard.token not in cookie
    lowered = [f.lower() for f in flags]
    assert "httponly" in lowered and "samesite=strict" in lowered and "path=/" in lowered
    code, _, page = request(dashboard, "GET", "/", {"Cookie": name_value})
    assert code == 200 and b"tether dashboard" in page
    assert b"<script>" not in page  # no inline script: the CSP allows none
    for bad in ("tether_session_1=x", name_value + "x", ""):
        assert request(dashboard, "GET", "/api/status", {"Cookie": bad})[0] == 403
    assert (
        request(dashboard, "GET", "/api/status", {"Authorization": f"Bearer {dashboard.token}"})[0]
        == 200
    )


def test_a_post_needs_the_session_its_csrf_token_and_this_origin(dashboard: Dashboard) -> None:
    """The seam for routes that change state: the guard lets a checked POST reach the routes
    (the runs route takes none: 405; the outbox's do, test_dashboard_outbox.py) and turns
    every other one away (403)."""
    cookie, csrf = session(dashboard)
    origin = dashboard.base
    ok = {"Cookie": cookie, "Origin": origin, "X-CSRF-Token": csrf, "Content-Length": "0"}
    assert request(dashboard, "POST", "/api/runs", ok)[0] == 405
    for change in (
        {"Origin": "http://evil.example"},
        {"Origin": ""},
        {"X-CSRF-Token": "not-it"},
        {"X-CSRF-Token": ""},
        {"Cookie": ""},
    ):
        headers = {k: v for k, v in {**ok, **change}.items() if v}
        assert request(dashboard, "POST", "/api/runs", headers)[0] == 403, change
    # the token alone (a script) reads, but does not change anything
    bearer = {"Authorization": f"Bearer {dashboard.token}", "Origin": origin, "Content-Length": "0"}
    assert request(dashboard, "POST", "/api/runs", bearer)[0] == 403


def test_an_unchanged_answer_is_a_bodiless_304(dashboard: Dashboard) -> None:
    auth = {"Authorization": f"Bearer {dashboard.token}"}
    for path in (
        "/api/runs",
        "/api/board",
        "/api/loop",
        "/api/runs/r-20260302-091000-bbbbbb",
        "/static/app.js",
    ):
        code, headers, body = request(dashboard, "GET", path, auth)
        assert code == 200 and body and headers["etag"], path
        code, again, body = request(
            dashboard, "GET", path, {**auth, "If-None-Match": headers["etag"]}
        )
        assert (code, body) == (304, b""), path
        assert again["etag"] == headers["etag"]
        assert request(dashboard, "GET", path, {**auth, "If-None-Match": '"stale"'})[0] == 200


def test_open_gives_the_browser_a_one_time_code_never_the_token(
    world: World, tmp_path: Path
) -> None:
    """``--open`` starts the browser ($BROWSER, here a script that writes down its
    arguments): it gets a code that is good for one exchange, and no token."""
    seen = tmp_path / "browser-argv.txt"
    browser = tmp_path / "browser.sh"
    browser.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > {seen}\n', encoding="utf-8")
    browser.chmod(0o755)
    running = start_dashboard(world.project, {**os.environ, "BROWSER": f"{browser} %s"}, "--open")
    try:
        deadline = time.monotonic() + 20
        while not seen.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        argv = seen.read_text(encoding="utf-8")
        assert running.token not in argv
        (url,) = argv.split()
        parts = urlsplit(url)
        assert parts.path == "/" and parts.query.startswith("once=")
        path = f"/?{parts.query}"
        code, headers, _ = request(running, "GET", path)
        assert code == 303 and headers["location"] == "/" and "set-cookie" in headers
        assert request(running, "GET", path)[0] == 403  # used up
    finally:
        running.stop()


def test_sigterm_stops_it_cleanly_with_exit_0(world: World) -> None:
    running = start_dashboard(world.project, dict(os.environ))
    stream = http.client.HTTPConnection(
        urlsplit(running.base).hostname or "", urlsplit(running.base).port, timeout=10
    )
    stream.request("GET", f"/events?token={running.token}")  # an open page keeps a stream
    assert stream.getresponse().status == 200
    running.proc.send_signal(signal.SIGTERM)
    try:
        # a deadline, not a speed claim: the stop lets a look already running in a
        # worker thread finish, which takes seconds on two loaded cores
        code = running.proc.wait(timeout=60)
    finally:
        stream.close()
    assert code == 0
    _, err = running.proc.communicate()
    assert "Traceback" not in err
