"""Hostile text everywhere, in a real headless Chromium: nothing runs, nothing is fetched.

Every field a run, a ticket, a wiki page (the room's question, the ingest
queue's file names), a loop tick or an orchestrator can set carries markup
that would run script if it were ever parsed as HTML. Each page is opened and
must show the text as text: no planted element exists, no planted handler
ran, no console error. A report naming a remote image, served by a real local
listener, must leave that listener untouched: the image is a link, and the
CSP would refuse it anyway.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from tests.dashboard.support import Dashboard, chromium, start_dashboard
from tests.dashboard.test_dashboard_browser import count, text, wait
from tests.status.world import NOW, add_run, at

from tether.board import Board, State
from tether.clock import FakeClock
from tether.gate import gate_db
from tether.gate.counter import Seen, count_call, set_session_budget
from tether.loop.tick_memory import record_tick
from tether.room.room import wiki_lock_path
from tether.runs.record import RunPaths
from tether.store import connect
from tether.watch.registry import Registration, WakeRecord, add_orchestrator, record_wake

MARK = "zq"  # every payload carries it, so its text can be found on the page
PAYLOADS = (
    f'{MARK}1<img src=x onerror="window.__xss=(window.__xss||0)+1">',
    f'{MARK}2"><svg onload="window.__xss=(window.__xss||0)+1"></svg>',
    f"{MARK}3</td></tr><script>window.__xss=(window.__xss||0)+1</script>",
    f"{MARK}4' onmouseover='window.__xss=1' x='",
    f'{MARK}5<a href="javascript:window.__xss=1">click</a>',
)
EVIL = " ".join(PAYLOADS)
RUN = "r-20260302-091000-eeeeee"


class Listener:
    """A real TCP listener that counts every connection made to it."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.hits: list[bytes] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(2)
                try:
                    self.hits.append(conn.recv(4096))
                except OSError:
                    self.hits.append(b"")

    def close(self) -> None:
        self.sock.close()


def _hostile_world(home: Path, project: Path, leak_port: int) -> Any:
    project.mkdir(parents=True)
    (project / "wiki" / "pages").mkdir(parents=True)
    (project / "tether.toml").write_text('[wiki]\nroot = "wiki"\n', encoding="utf-8")
    # a run in progress and one that ended, every free-text field hostile
    add_run(
        home, "r-20260302-092000-dddddd", unit=EVIL, profile=EVIL, session_id=EVIL, started_at=at(3)
    )
    row = add_run(
        home,
        RUN,
        unit=EVIL,
        profile=EVIL,
        status="iteration_limit",
        stop_reason=EVIL,
        exit_code=20,
        started_at=at(20),
        ended_at=at(15),
        argv=["--format", "claude-code"],
    )
    paths = RunPaths(Path(row.run_dir))
    paths.report_md.write_text(
        f"# Progress report {EVIL}\n\n![leak](http://127.0.0.1:{leak_port}/leak.png)\n\n"
        f'<img src="http://127.0.0.1:{leak_port}/raw.png">\n\n[docs](http://127.0.0.1:{leak_port}/docs)\n\n'
        f"[js](javascript:window.__xss=1)\n\n| a | b |\n|---|---|\n| {EVIL} | x |\n",
        encoding="utf-8",
    )
    paths.report_json.write_text(
        json.dumps({"files_changed": [EVIL, {"path": EVIL, "status": EVIL}]}), encoding="utf-8"
    )
    events = [
        {
            "type": "assistant",
            "message": {
                "id": "m1",
                "content": [{"type": "tool_use", "id": "c1", "name": EVIL, "input": {"x": EVIL}}],
            },
        },
        {
            "type": "user",
            "message": {
                "content": [
                    {"type": "tool_result", "tool_use_id": "c1", "content": EVIL, "is_error": True}
                ]
            },
        },
    ]
    paths.events.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    # the board: titles, bodies, what a ticket needs or waits on, a lock, an unreadable file
    board = Board(project / "tickets", project)
    board.ensure()
    board.add(EVIL, priority="P1", state=State.ACTIONABLE, body=EVIL)
    board.add(EVIL, state=State.USER, reason="decision", body=EVIL, front={"needs": EVIL})
    board.add(EVIL, state=State.BLOCKED, reason="lock", front={"blocked_by": EVIL, "check": [EVIL]})
    board.add(EVIL, state=State.ACTIONABLE, front={"user_lock": EVIL})
    (board.root / "DONE" / f"{PAYLOADS[0]}.md").write_text(f"---\ntitle: [{EVIL}\n---\n", "utf-8")
    (board.root / "INBOX" / f"{PAYLOADS[3]}.md").write_text(EVIL, encoding="utf-8")
    conn = connect(home)
    try:
        record_tick(
            conn,
            str(board.root),
            {
                "signal": "user-only",
                "line": f"TETHER-LOOP: STOP (user-only) — {EVIL}",
                "exit_code": 14,
                "at": at(2),
                "dry_run": False,
                "dispatched": {"summary": EVIL},
                "bundle": {
                    "tickets": [{"id": EVIL, "title": EVIL, "location": EVIL}],
                    "items": [EVIL],
                },
                "level2": {
                    "outcome": EVIL,
                    "guard": {"why": EVIL},
                    "sources": [
                        {"role": EVIL, "status": EVIL, "where": EVIL, "items": EVIL, "reason": EVIL}
                    ],
                },
            },
        )
        clock = FakeClock(datetime.fromtimestamp(NOW - 3600, UTC))
        orch = add_orchestrator(
            conn, Registration(name=EVIL, pid=2**22 + 19, harness=EVIL), clock=clock
        )
        record_wake(
            conn,
            WakeRecord(
                at=at(3),
                orchestrator_id=orch.id,
                reason=EVIL,
                subagent=EVIL,
                pending_tool=EVIL,
                pending_call_id=None,
                idle_seconds=1.0,
                message=EVIL,
                channels=({"channel": EVIL, "ok": False, "detail": EVIL},),
                delivered=False,
            ),
        )
    finally:
        conn.close()
    # the gate: a session named by the agent's environment, near its budget
    set_session_budget(home, EVIL, calls=2, run_id=EVIL)
    gconn = gate_db.connect(os.fspath(home))
    try:
        for n in range(3):
            count_call(gconn, Seen(EVIL, "env", "claude-code", "PreToolUse", EVIL, f"c{n}"))
    finally:
        gconn.close()
    # a wiki's room: its question is the reader's text
    lock = wiki_lock_path(home, project / "wiki")
    lock.parent.mkdir(parents=True, exist_ok=True)
    handle = lock.open("a+", encoding="utf-8")
    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    handle.write(f"room R-1, pid {os.getpid()}: {EVIL}")
    handle.flush()
    return handle


@pytest.fixture
def leak() -> Iterator[Listener]:
    listener = Listener()
    try:
        yield listener
    finally:
        listener.close()


@pytest.fixture
def hostile(tmp_path: Path, tether_home: Path, leak: Listener) -> Iterator[Dashboard]:
    handle = _hostile_world(tether_home, tmp_path / "project", leak.port)
    running = start_dashboard(tmp_path / "project", dict(os.environ))
    try:
        yield running
    finally:
        running.stop()
        handle.close()


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Any]:
    driver = chromium(tmp_path)
    try:
        yield driver
    finally:
        driver.quit()


def _clean(browser: Any, page: str) -> None:
    found = browser.execute_script(
        "return {xss: window.__xss || 0,"
        " planted: document.querySelectorAll('#page img, #page svg, #page iframe, #page object,"
        " #page embed, #page [onerror], #page [onload], #page [onmouseover],"
        ' #page a[href^="javascript"]\').length,'
        " scripts: document.scripts.length,"
        " shown: document.body.innerText.split(arguments[0]).length - 1};",
        MARK,
    )
    assert found["xss"] == 0, page
    assert found["planted"] == 0, page
    assert found["scripts"] == 2, page  # uPlot and the app, nothing else
    assert found["shown"] > 0, f"{page}: the hostile text is not shown as text"


@pytest.mark.slow  # a real Chromium
def test_hostile_text_in_every_field_is_shown_as_text_and_nothing_calls_out(
    hostile: Dashboard, browser: Any, leak: Listener
) -> None:
    browser.get(hostile.url)
    wait(lambda: count(browser, "#panel-ended"), 20, "the overview did not load")
    assert "token=" not in browser.current_url  # traded for the cookie
    wait(lambda: count(browser, "#panel-watch tr"), 10, "the watchdog panel is empty")
    _clean(browser, "overview")
    for page, ready in (
        ("#/runs", "#runs-table tr[data-run]"),
        (f"#/run/{RUN}", "#run-report"),
        ("#/loop", "#tick-sources tr"),
        ("#/board", "#board-malformed li"),
    ):
        browser.get(hostile.base + "/" + page)
        wait(partial(count, browser, ready), 15, f"{page} did not load")
        _clean(browser, page)
    browser.get(hostile.base + f"/#/run/{RUN}")
    wait(lambda: count(browser, "#run-report a.image-link"), 15, "the report's image is no link")
    links = browser.execute_script(
        "return Array.from(document.querySelectorAll('#run-report a')).map(function (a) {"
        " return [a.getAttribute('href'), a.target, a.rel]; });"
    )
    for href, target, rel in links:
        assert target == "_blank" and "noopener" in rel and "noreferrer" in rel, href
    assert f"http://127.0.0.1:{leak.port}/leak.png" in [h for h, _, _ in links]
    assert "<img" in (text(browser, "#run-report") or "")  # the raw tag, as text
    assert "model step" in (text(browser, "#run-timeline") or "") or count(
        browser, "#run-timeline tr"
    )
    browser.get(hostile.base + "/#/board")
    wait(lambda: count(browser, ".ticket"), 15, "no tickets")
    assert browser.execute_script(
        "var t = document.querySelector('.column[data-state=USER] .ticket');"
        " t.click(); return true;"
    )
    wait(lambda: count(browser, "#panel-ticket pre"), 10, "a ticket does not open")
    _clean(browser, "a ticket")
    errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert errors == []
    assert leak.hits == [], leak.hits  # not one connection reached the image's host
