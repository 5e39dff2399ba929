"""The dashboard in a real headless Chromium, during a real supervised run and after its limit stop.

The run is a real ``tether run`` of the scripted agent (only its model is
fake). The browser must show the run while it works, its budget bar moving,
then the limit stop with its report within 2 s of the run's end, without a
single console error; and a page without the token is refused (403).

Screenshots of the main pages go to the test's temporary folder; with
``UPDATE_DOCS_SCREENSHOTS=1`` they are also copied to docs/images/dashboard/
(the screenshots of the how-to are made this way:
``UPDATE_DOCS_SCREENSHOTS=1 .venv/bin/python -m pytest tests/dashboard/test_dashboard_browser.py``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.dashboard.support import Dashboard, png_size, tether_argv
from tests.status.world import World, at, build

from tether.board import Board, State
from tether.loop.tick_memory import record_tick
from tether.store import connect

DOCS_IMAGES = Path(__file__).resolve().parents[2] / "docs" / "images" / "dashboard"
WIDTH, HEIGHT = 1400, 1000
STOP_SHOWN_WITHIN = 2.0
SIGNALS = ["continue", "continue", "exhausted", "guard-exhausted", "continue", "blind"]

PROFILE = """
[profiles.slow]
harness = "scripted"
args = ["--format", "claude-code", "--steps", "40", "--step-delay", "0.5"]
default = true
"""


@pytest.fixture
def world(tmp_path: Path, tether_home: Path) -> Iterator[World]:
    project = tmp_path / "project"
    board = Board(project / "tickets", project)
    made = build(tether_home, project, live_run=False, board=str(board.root))
    with (project / "tether.toml").open("a", encoding="utf-8") as f:
        f.write(PROFILE)
    board.ensure()
    board.add("Tidy the parser", priority="P1", state=State.ACTIONABLE, body="Split parse().")
    board.add(
        "Pick a licence",
        state=State.USER,
        reason="decision",
        body="MIT or Apache-2.0?",
        front={"needs": "a licence choice"},
    )
    board.add(
        "Wait for the API review",
        state=State.WAITING,
        reason="review-due",
        front={"until": "2026-04-01"},
    )
    board.add("Ship 0.2", state=State.DONE)
    conn = connect(tether_home)
    try:
        for n, signal in enumerate(SIGNALS):
            record_tick(
                conn,
                str(board.root),
                {
                    "signal": signal,
                    "line": f"TETHER-LOOP: {signal.upper()} — recorded tick {n}",
                    "exit_code": 0 if signal == "continue" else 10,
                    "at": at(40 - n),
                    "dry_run": False,
                    "level2": {
                        "outcome": signal,
                        "guard": {"why": "no guard state yet"},
                        "sources": [
                            {"role": "user.model", "status": "empty", "where": "_TOM", "items": 0},
                            {"role": "memory.organic", "status": "empty", "items": 0},
                        ],
                    },
                },
            )
    finally:
        conn.close()
    try:
        yield made
    finally:
        made.close()


def wait(what: Callable[[], Any], timeout: float, message: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = what()
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError(message)


def shot(browser: Any, folder: Path, name: str) -> Path:
    path = folder / name
    assert browser.save_screenshot(str(path))
    viewport = browser.execute_script(
        "var r = devicePixelRatio;return [Math.round(innerWidth * r), Math.round(innerHeight * r)];"
    )
    width, height = png_size(path)
    assert [width, height] == viewport and width == WIDTH and height >= HEIGHT * 0.8, (
        name,
        width,
        height,
    )
    assert path.stat().st_size > 20_000, f"{name} looks empty ({path.stat().st_size} bytes)"
    return path


# The pages redraw on every live update: read and click through one script call each,
# never through element references a redraw would make stale.


def text(browser: Any, selector: str) -> str | None:
    return browser.execute_script(  # type: ignore[no-any-return]
        "var e = document.querySelector(arguments[0]); return e ? e.innerText : null;", selector
    )


def attr(browser: Any, selector: str, name: str) -> str | None:
    return browser.execute_script(  # type: ignore[no-any-return]
        "var e = document.querySelector(arguments[0]);"
        "return e ? e.getAttribute(arguments[1]) : null;",
        selector,
        name,
    )


def attrs(browser: Any, selector: str, name: str) -> list[str]:
    return browser.execute_script(  # type: ignore[no-any-return]
        "var name = arguments[1]; return Array.from(document.querySelectorAll(arguments[0]))"
        ".map(function (e) { return e.getAttribute(name); });",
        selector,
        name,
    )


def count(browser: Any, selector: str) -> int:
    return int(
        browser.execute_script("return document.querySelectorAll(arguments[0]).length;", selector)
    )


def click(browser: Any, selector: str, index: int = 0) -> bool:
    return bool(
        browser.execute_script(
            "var e = document.querySelectorAll(arguments[0])[arguments[1]];"
            "if (!e) return false; e.click(); return true;",
            selector,
            index,
        )
    )


def bar_value(browser: Any, run_id: str, kind: str) -> float | None:
    value = attr(
        browser, f'#running-table tr[data-run="{run_id}"] [data-kind="{kind}"]', "data-value"
    )
    return None if value is None else float(value)


@pytest.mark.slow
def test_a_live_run_its_limit_stop_and_every_page(
    world: World, dashboard: Dashboard, browser: Any, tmp_path: Path
) -> None:
    shots = tmp_path / "screenshots"
    shots.mkdir()
    browser.get(dashboard.url)
    wait(lambda: count(browser, "#panel-ended"), 20, "the overview did not load")
    wait(lambda: "on" in (attr(browser, "#live", "class") or ""), 10, "no live connection")
    assert count(browser, "#running-table-empty") == 1

    run = subprocess.Popen(
        tether_argv("run", "--unit", "T-7", "--prompt", "tidy the parser", "--iterations", "8"),
        cwd=world.project,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        run_id = wait(
            lambda: attr(browser, "#running-table tr[data-run]", "data-run"),
            20,
            "the run did not appear among the runs in progress",
        )
        first = wait(lambda: bar_value(browser, run_id, "iterations"), 10, "no iterations bar")
        wait(
            lambda: (bar_value(browser, run_id, "iterations") or 0) > first,
            15,
            "the iterations bar did not move",
        )
        shot(browser, shots, "dashboard-live-run.png")

        assert click(browser, f'#running-table a[href="#/run/{run_id}"]')
        wait(lambda: count(browser, "#chart-calls canvas"), 10, "the run page has no chart")
        assert text(browser, "#run-status") == "running"
        wait(lambda: count(browser, "#run-timeline tr"), 10, "the run page has no timeline")
        shot(browser, shots, "dashboard-run-live.png")

        _out, err = run.communicate(timeout=60)
        ended = time.monotonic()
    finally:
        if run.poll() is None:
            run.kill()
            run.communicate()
    assert run.returncode == 20, err  # the iteration limit stopped it

    wait(
        lambda: text(browser, "#run-status") == "iteration_limit" and count(browser, "#run-report"),
        10,
        "the limit stop and its report did not appear",
    )
    shown_after = time.monotonic() - ended
    assert shown_after <= STOP_SHOWN_WITHIN, f"the stop showed {shown_after:.2f} s after the run"
    report = text(browser, "#run-report") or ""
    assert "iteration" in report.lower() and run_id in report
    assert "8/8" in (text(browser, "#run-budget") or "")
    shot(browser, shots, "dashboard-run-stopped.png")

    browser.get(dashboard.url)
    row = f'#ended-table tr[data-run="{run_id}"]'
    wait(lambda: count(browser, row), 10, "the stopped run is not among the ended runs")
    assert attr(browser, row, "data-status") == "iteration_limit"
    assert count(browser, row + " a.report-link") == 1
    for panel in ("loops", "watch", "gate", "ingest", "room"):
        assert (text(browser, f"#panel-{panel}") or "").strip(), panel
    assert "9/10" in (text(browser, "#panel-gate") or "")
    shot(browser, shots, "dashboard-overview.png")

    browser.get(dashboard.url + "#/runs?status=iteration_limit")
    wait(lambda: count(browser, f'#runs-table tr[data-run="{run_id}"]'), 10, "no status filter")
    assert "2 runs" in (text(browser, "#page-info") or "")
    shot(browser, shots, "dashboard-runs.png")

    browser.get(dashboard.url + "#/loop")
    wait(lambda: count(browser, "#loop-strip .tick"), 10, "no loop strip")
    assert attrs(browser, "#loop-strip .tick", "data-signal") == ["continue", "user-only", *SIGNALS]
    assert click(browser, "#loop-strip .tick", 2)
    wait(lambda: count(browser, "#tick-sources tr"), 5, "a tick's level-2 evidence does not open")
    assert "memory.organic" in (text(browser, "#tick-detail") or "")
    shot(browser, shots, "dashboard-loop.png")

    browser.get(dashboard.url + "#/board")
    wait(lambda: count(browser, "#board-columns .column"), 10, "no board columns")
    states = attrs(browser, "#board-columns .column", "data-state")
    assert states == ["INBOX", "ACTIONABLE", "BLOCKED", "WAITING", "USER", "PARKED", "DONE"]
    assert browser.execute_script(
        "var t = Array.from(document.querySelectorAll('.column[data-state=USER] .ticket'))"
        ".find(function (e) { return e.innerText.indexOf('Pick a licence') >= 0; });"
        " if (!t) return false; t.click(); return true;"
    )
    wait(
        lambda: "MIT or Apache-2.0?" in (text(browser, "#panel-ticket") or ""),
        5,
        "a ticket does not open",
    )
    shot(browser, shots, "dashboard-board.png")

    errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert errors == []

    assert "token=" not in browser.current_url  # the token was traded for a cookie
    browser.delete_all_cookies()
    browser.get(dashboard.base + "/")
    assert "403" in (text(browser, "body") or "")
    browser.get(dashboard.base + "/api/status?token=not-the-token")
    assert "403" in (text(browser, "body") or "")

    if os.environ.get("UPDATE_DOCS_SCREENSHOTS") == "1":
        DOCS_IMAGES.mkdir(parents=True, exist_ok=True)
        for made in sorted(shots.glob("*.png")):
            shutil.copyfile(made, DOCS_IMAGES / made.name)
