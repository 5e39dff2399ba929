"""The outbox on the dashboard: a person approves there, and nothing else can.

A real project in git with a real bare remote, a proposal from a real run of
the scripted agent, a real ``tether dashboard`` started outside every agent's
process tree; plain HTTP for the guard's answers, a real headless Chromium for
the page: approving in the browser pushes to the remote; a page of another
origin that posts to the dashboard (a form, as a cross-site attack would) is
refused and changes nothing.
"""

from __future__ import annotations

import http.client
import json
import subprocess
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from tests.dashboard.support import URL_LINE, Dashboard, chromium, tether_argv
from tests.outbox.conftest import Repo, repo  # noqa: F401  (the fixture)
from tests.outside_agents import detached, without_agent_vars


def _propose(project: Repo) -> str:
    project.agent_does(
        "echo more >> README.md && git commit -qam 'Say more'", "tether outbox propose push"
    )
    done = project.tether("run", "--prompt", "Say more, and share it.")
    assert done.returncode == 0, done.stdout + done.stderr
    (listed,) = json.loads(project.person("outbox", "list", "--json").stdout)
    return str(listed["id"])


@pytest.fixture
def board(repo: Repo) -> Iterator[tuple[Repo, Dashboard, str]]:  # noqa: F811
    """The project with one proposal waiting, and its dashboard, started by a person."""
    pid = _propose(repo)
    proc = subprocess.Popen(
        detached(tether_argv("dashboard", "--port", "0")),
        cwd=repo.root,
        env=without_agent_vars(repo.project.env()),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert proc.stdout is not None
    url = None
    deadline = time.monotonic() + 60
    while url is None and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        found = URL_LINE.match(line.strip())
        url = found.group(1) if found else None
    assert url is not None, proc.stderr.read() if proc.stderr else ""
    running = Dashboard(proc, url)
    try:
        yield repo, running, pid
    finally:
        import os
        import signal

        os.killpg(proc.pid, signal.SIGINT)  # the launcher and the dashboard under it
        try:
            proc.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()


def _request(
    dashboard: Dashboard, method: str, path: str, headers: dict[str, str], body: bytes = b""
) -> tuple[int, dict[str, str], bytes]:
    parts = urlsplit(dashboard.base)
    conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=120)
    try:
        conn.request(method, path, body=body, headers={"Host": parts.netloc, **headers})
        answer = conn.getresponse()
        return answer.status, {k.lower(): v for k, v in answer.getheaders()}, answer.read()
    finally:
        conn.close()


def _session(dashboard: Dashboard) -> tuple[str, str]:
    code, headers, _ = _request(dashboard, "GET", f"/?token={dashboard.token}", {})
    assert code == 303
    cookie = headers["set-cookie"].split(";", 1)[0]
    code, _, body = _request(dashboard, "GET", "/api/session", {"Cookie": cookie})
    assert code == 200
    return cookie, str(json.loads(body)["csrf"])


def _state(project: Repo, pid: str) -> str:
    (found,) = json.loads(project.person("outbox", "list", "--json").stdout)
    assert found["id"] == pid
    return str(found["state"])


def test_the_dashboard_approves_only_with_session_origin_and_csrf(
    board: tuple[Repo, Dashboard, str],
) -> None:
    project, dashboard, pid = board
    before = project.remote_head()
    cookie, csrf = _session(dashboard)
    code, _, body = _request(dashboard, "GET", "/api/outbox", {"Cookie": cookie})
    listed = json.loads(body)
    assert code == 200 and listed["waiting"] == 1 and listed["proposals"][0]["id"] == pid

    path = f"/api/outbox/{pid}/approve"
    good = {
        "Cookie": cookie,
        "Origin": dashboard.base,
        "X-CSRF-Token": csrf,
        "Content-Type": "application/json",
    }
    for change in (
        {"Origin": "http://127.0.0.1:9"},  # another origin on the same machine
        {"Origin": ""},
        {"X-CSRF-Token": "guessed"},
        {"X-CSRF-Token": ""},
        {"Cookie": ""},
    ):
        headers = {k: v for k, v in {**good, **change}.items() if v}
        assert _request(dashboard, "POST", path, headers, b"{}")[0] == 403, change
    token_only = {"Authorization": f"Bearer {dashboard.token}", "Origin": dashboard.base}
    assert _request(dashboard, "POST", path, token_only, b"{}")[0] == 403
    assert _state(project, pid) == "proposed" and project.remote_head() == before

    for bad, status in (
        ("/api/outbox/p-00000000/approve", 404),
        (f"/api/outbox/{pid}/launch", 400),
    ):
        code, _, answer = _request(dashboard, "POST", bad, good, b"{}")
        assert code == status and json.loads(answer)["error"], (bad, answer)
    code, _, answer = _request(dashboard, "POST", f"/api/outbox/{pid}/reject", good, b"{}")
    assert code == 400 and "--reason is empty" in json.loads(answer)["error"]

    code, _, answer = _request(dashboard, "POST", path, good, b'{"note": "from the page"}')
    assert code == 200, answer
    decided = json.loads(answer)
    assert decided["ok"] and decided["proposal"]["state"] == "done"
    assert decided["proposal"]["decided_by"].endswith("via the dashboard")
    assert decided["proposal"]["note"] == "from the page"
    assert project.remote_head() == project.head() != before
    code, _, answer = _request(dashboard, "POST", path, good, b"{}")
    assert code == 409 and "already done" in json.loads(answer)["error"]


EVIL_PAGE = """<!doctype html><html><body>
<form id="f" method="POST" action="{target}" enctype="text/plain">
<input name='{{"note": "' value='forged"}}'></form>
<script>document.getElementById("f").submit();</script>
</body></html>"""


@pytest.fixture
def other_origin() -> Iterator[tuple[str, list[str]]]:
    """A page on another origin of this machine (a port of its own), as an attacker's."""
    pages: list[str] = []

    class Page(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = pages[0].encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/", pages
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@pytest.mark.slow
def test_in_the_browser_approve_pushes_and_a_cross_origin_post_is_refused(
    board: tuple[Repo, Dashboard, str], other_origin: tuple[str, list[str]], tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    project, dashboard, pid = board
    before = project.remote_head()
    evil_url, pages = other_origin
    pages.append(EVIL_PAGE.format(target=f"{dashboard.base}/api/outbox/{pid}/approve"))
    driver = chromium(tmp_path)
    try:
        driver.get(dashboard.url)  # the printed URL: its token becomes the session cookie
        WebDriverWait(driver, 30).until(lambda d: "token=" not in d.current_url)

        # the attacker's page posts to the dashboard with the browser's cookie
        driver.get(evil_url)
        WebDriverWait(driver, 30).until(lambda d: "/api/outbox/" in d.current_url)
        assert "403" in driver.find_element(By.TAG_NAME, "body").text
        assert _state(project, pid) == "proposed" and project.remote_head() == before

        driver.get_log("browser")  # drained: what follows is the dashboard's page alone
        driver.get(f"{dashboard.base}/#/outbox")
        button = WebDriverWait(driver, 30).until(
            lambda d: d.find_element(By.CSS_SELECTOR, f'button[data-approve="{pid}"]')
        )
        driver.find_element(By.ID, f"outbox-text-{pid}").send_keys("looks right")
        button.click()
        WebDriverWait(driver, 120).until(
            lambda d: d.find_elements(
                By.CSS_SELECTOR, f'tr[data-proposal="{pid}"][data-state="done"]'
            )
        )
        result = driver.find_element(By.ID, "outbox-result").text
        assert f"{pid} done: push 1 commit" in result
        errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        assert not errors, errors
    finally:
        driver.quit()
    assert project.remote_head() == project.head() != before
    assert _state(project, pid) == "done"
