"""Live pages in a real headless Chromium: updated in place, kept where the reader left them.

- The Board page shows a ``board move`` made outside it, without a reload, and
  the other columns' elements are the same objects as before (nothing redrawn).
- The Runs page counts a run started after it was opened.
- During a real supervised run (the scripted agent; only its model is fake) the
  overview updates about every second: a card scrolled sideways keeps its
  scroll, a selected id stays selected, the row is the same element.
- At phone width the board's first screen shows the columns that hold tickets.
- With the system's dark theme the page is dark.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.dashboard.support import Dashboard, tether_argv
from tests.dashboard.test_dashboard_browser import PROFILE, attr, count, text, wait
from tests.status.world import World, add_run, at, build

from tether.board import Board

pytestmark = pytest.mark.slow  # every test drives a real headless Chromium


@pytest.fixture
def world(tmp_path: Path, tether_home: Path) -> Iterator[World]:
    """The status world (its board has a ticket in every state but INBOX), with a slow
    scripted agent as the default profile."""
    project = tmp_path / "project"
    made = build(tether_home, project, live_run=False, board=str(project / "tickets"))
    with (project / "tether.toml").open("a", encoding="utf-8") as f:
        f.write(PROFILE)
    try:
        yield made
    finally:
        made.close()


def mark(browser: Any, selector: str) -> None:
    """Tag an element as a JS object: a redraw would replace it and lose the tag."""
    assert browser.execute_script(
        "var e = document.querySelector(arguments[0]); if (!e) return false;"
        " e.__kept = true; return true;",
        selector,
    ), selector


def kept(browser: Any, selector: str) -> bool:
    return bool(
        browser.execute_script(
            "var e = document.querySelector(arguments[0]); return !!(e && e.__kept);", selector
        )
    )


def test_the_board_page_follows_a_move_in_place(
    world: World, dashboard: Dashboard, browser: Any
) -> None:
    browser.get(dashboard.url + "#/board")
    wait(lambda: count(browser, '.column[data-state="ACTIONABLE"] .ticket') == 3, 20, "no board")
    mark(browser, '.column[data-state="DONE"] .ticket')
    mark(browser, "#board-columns")
    board = Board(world.project / "tickets", world.project)
    ticket = next(t for t in board.load().tickets if t.title == "Tidy the parser")
    subprocess.run(
        tether_argv("board", "move", ticket.id, "USER/decision", "--needs", "a yes or no"),
        cwd=world.project,
        capture_output=True,
        text=True,
        check=True,
    )
    wait(
        lambda: count(browser, f'.column[data-state="USER"] .ticket[data-ticket="{ticket.id}"]'),
        10,
        "the moved ticket did not appear in USER without a reload",
    )
    assert count(browser, '.column[data-state="ACTIONABLE"] .ticket') == 2
    assert kept(browser, '.column[data-state="DONE"] .ticket') and kept(browser, "#board-columns")
    browser.get(dashboard.base + "/")
    wait(lambda: "a yes or no" in (text(browser, "#board-person") or ""), 10, "not in the queue")


def test_the_runs_page_counts_a_new_run_without_a_reload(
    world: World, dashboard: Dashboard, browser: Any
) -> None:
    browser.get(dashboard.url + "#/runs")
    wait(lambda: "2 runs" in (text(browser, "#page-info") or ""), 20, "no runs page")
    mark(browser, "#runs-table")
    add_run(world.home, "r-20260302-092900-ffffff", unit="T-9", started_at=at(1))
    wait(lambda: "3 runs" in (text(browser, "#page-info") or ""), 10, "the new run is not counted")
    assert count(browser, '#runs-table tr[data-run="r-20260302-092900-ffffff"]') == 1
    assert kept(browser, "#runs-table")


def test_a_live_run_keeps_the_readers_scroll_and_selection(
    world: World, dashboard: Dashboard, browser: Any
) -> None:
    browser.set_window_size(760, 1000)  # the running table is wider than its card
    browser.get(dashboard.url)
    wait(lambda: count(browser, "#panel-ended"), 20, "the overview did not load")
    run = subprocess.Popen(
        tether_argv("run", "--unit", "T-7", "--prompt", "tidy", "--iterations", "30"),
        cwd=world.project,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        run_id = wait(
            lambda: attr(browser, "#running-table tr[data-run]", "data-run"), 20, "no run"
        )
        row = f'#running-table tr[data-run="{run_id}"]'
        first = wait(
            lambda: attr(browser, row + ' [data-kind="iterations"]', "data-value"), 10, "?"
        )
        wide = browser.execute_script(
            "var c = document.getElementById('panel-running'); c.scrollLeft = 120;"
            " return [c.scrollLeft, c.scrollWidth > c.clientWidth];"
        )
        assert wide[1] and wide[0] > 0, "the card does not scroll sideways at this width"
        selected = browser.execute_script(
            "var cell = document.querySelector('#ended-table tr td a');"
            " var range = document.createRange(); range.selectNodeContents(cell);"
            " var s = getSelection(); s.removeAllRanges(); s.addRange(range); return s.toString();"
        )
        assert selected
        mark(browser, row)
        wait(
            lambda: attr(browser, row + ' [data-kind="iterations"]', "data-value") != first,
            20,
            "the run's bar did not move",
        )
        second = attr(browser, row + ' [data-kind="iterations"]', "data-value")
        wait(
            lambda: attr(browser, row + ' [data-kind="iterations"]', "data-value") != second,
            20,
            "no second update",
        )
        after = browser.execute_script(
            "return [document.getElementById('panel-running').scrollLeft,"
            " getSelection().toString()];"
        )
        assert after == [wide[0], selected], "an update moved the reader's scroll or selection"
        assert kept(browser, row), "the run's row was drawn again instead of updated"
    finally:
        run.kill()
        run.communicate()


def test_at_phone_width_the_board_shows_its_tickets_first(
    world: World, dashboard: Dashboard, browser: Any
) -> None:
    browser.set_window_size(390, 844)
    browser.get(dashboard.url + "#/board")
    wait(lambda: count(browser, ".column .ticket"), 20, "no board")
    layout = browser.execute_script(
        "return Array.from(document.querySelectorAll('#board-columns .column')).map(function (c) {"
        " return [c.dataset.state, c.querySelectorAll('.ticket').length,"
        " c.getBoundingClientRect().top, c.getBoundingClientRect().width]; })"
        ".sort(function (a, b) { return a[2] - b[2]; });"
    )
    holding = [s for s, n, _, _ in layout if n]
    assert [s for s, _, _, _ in layout][: len(holding)] == holding  # holders first, top down
    assert holding and "INBOX" not in holding  # the world's INBOX has a note, no ticket
    first_top = layout[0][2]
    assert first_top < 844 and layout[0][3] <= 390  # the first screen shows a ticket
    overflow = browser.execute_script(
        "return document.documentElement.scrollWidth - document.documentElement.clientWidth;"
    )
    assert overflow <= 1, "the page scrolls sideways on a phone"


def test_the_dark_theme_follows_the_system(
    world: World, dashboard: Dashboard, browser: Any
) -> None:
    browser.execute_cdp_cmd(
        "Emulation.setEmulatedMedia",
        {"features": [{"name": "prefers-color-scheme", "value": "dark"}]},
    )
    browser.get(dashboard.url)
    wait(lambda: count(browser, "#panel-ended"), 20, "the overview did not load")
    colours = browser.execute_script(
        "function lum(c) { var m = c.match(/\\d+/g).map(Number);"
        " return (0.2126 * m[0] + 0.7152 * m[1] + 0.0722 * m[2]) / 255; }"
        " var b = getComputedStyle(document.body);"
        " var card = getComputedStyle(document.querySelector('.card'));"
        " return [lum(b.backgroundColor), lum(b.color), lum(card.backgroundColor)];"
    )
    background, ink, card = colours
    assert background < 0.15 and card < 0.2 and ink > 0.7, colours
    browser.execute_cdp_cmd(
        "Emulation.setEmulatedMedia",
        {"features": [{"name": "prefers-color-scheme", "value": "light"}]},
    )
    light = browser.execute_script(
        "var m = getComputedStyle(document.body).backgroundColor.match(/\\d+/g).map(Number);"
        " return (0.2126 * m[0] + 0.7152 * m[1] + 0.0722 * m[2]) / 255;"
    )
    assert light > 0.9
