"""Every tick leaves its signal line, time and evidence in the store (the loop's history)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

from tests.loop.conftest import Project

from tether.loop import Signal, tick
from tether.loop.tick_memory import TICKS_KEPT, recent_ticks, record_tick, ticked_boards
from tether.store import connect


def test_a_tick_records_its_line_time_and_level2_evidence(project: Project) -> None:
    project.all_sources_ready()
    loop = project.open()
    first = tick(loop)
    project.clock.advance(60)
    second = tick(loop, dry_run=True)
    assert first.signal is Signal.EXHAUSTED
    history = recent_ticks(loop.conn, loop.scope)
    assert [t.signal for t in history] == [first.signal.value, second.signal.value]
    assert history[0].line == first.line
    assert history[0].at == first.at and history[1].at == second.at
    assert history[0].exit_code == 10 and not history[0].dry_run and history[1].dry_run
    reports = history[0].evidence["level2"]["sources"]
    assert sorted(r["role"] for r in reports) == sorted(
        ["user.model", "decisions.ledger", "memory.organic", "memory.curated"]
    )
    assert ticked_boards(loop.conn) == [loop.scope]
    assert recent_ticks(loop.conn, "/elsewhere") == []


def test_only_the_newest_ticks_are_kept(tether_home: Path) -> None:
    conn: sqlite3.Connection = connect(tether_home)
    line = {"signal": "continue", "line": "x", "exit_code": 0, "dry_run": False}
    for n in range(TICKS_KEPT + 3):
        record_tick(conn, "/b", {**line, "at": f"2026-01-01T00:00:{n % 60:02d}Z", "n": n})
    kept = recent_ticks(conn, "/b", limit=TICKS_KEPT + 10)
    assert len(kept) == TICKS_KEPT
    assert kept[-1].evidence == {"n": TICKS_KEPT + 2}
    assert kept[0].evidence == {"n": 3}
    conn.close()


def test_the_package_names_the_tick_function_whatever_was_imported_first() -> None:
    probe = (
        "import tether.loop.runner\n"
        "from tether.loop import run_loop, tick\n"
        "assert callable(tick) and tick.__module__ == 'tether.loop.tick', tick\n"
    )
    subprocess.run([sys.executable, "-c", probe], check=True)
