"""A tether home with something in every panel, built through the library (real SQLite, files).

Times are fixed so that ``tether status`` at ``NOW`` gives the same object on
every machine; ``normalize`` replaces the temporary paths and this process's id.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

import pytest

from tether.board import Board, NewTicket, State
from tether.clock import FakeClock, to_iso
from tether.gate import gate_db
from tether.gate.counter import Seen, count_call, set_session_budget
from tether.ingest.queue import Queue
from tether.loop import guard
from tether.loop.tick_memory import record_tick
from tether.room.room import wiki_lock_path
from tether.runs.record import RunPaths
from tether.store import connect
from tether.store.runs import RunRow, insert_run
from tether.watch.registry import Registration, WakeRecord, add_orchestrator, record_wake
from tether.wiki.layout import Wiki

NOW = datetime(2026, 3, 2, 9, 30, tzinfo=UTC).timestamp()
BOARD = "/projects/demo/tickets"
WIKI_DIR = "wiki"


def at(minutes_before: float) -> str:
    return to_iso(datetime.fromtimestamp(NOW - minutes_before * 60, UTC))


@dataclass
class World:
    home: Path
    project: Path
    room_lock: IO[str]

    def close(self) -> None:
        self.room_lock.close()


def add_run(home: Path, run_id: str, **fields: Any) -> RunRow:
    values: dict[str, Any] = dict(
        id=run_id,
        unit="T-1",
        profile="scripted",
        harness="scripted",
        argv=["--steps", "9"],
        iteration_limit=10,
        tool_call_limit=20,
        timeout_seconds=600.0,
        started_at=at(10),
        run_dir=str(RunPaths.for_run(home, run_id).root),
    )
    values.update(fields)
    row = RunRow(**values)
    Path(row.run_dir).mkdir(parents=True, exist_ok=True)
    conn = connect(home)
    try:
        insert_run(conn, row)
    finally:
        conn.close()
    return row


def build(home: Path, project: Path, *, live_run: bool = True, board: str = BOARD) -> World:
    project.mkdir(parents=True, exist_ok=True)
    wiki_root = project / WIKI_DIR
    (wiki_root / "pages").mkdir(parents=True)
    (project / "tether.toml").write_text(f'[wiki]\nroot = "{WIKI_DIR}"\n', encoding="utf-8")

    if live_run:
        _live_run(home)
    _ended_runs(home)
    _loop_and_watch(home, board)
    _gate(home)
    _fleet(home)
    _board(project)
    return _ingest_and_room(home, project, wiki_root)


@pytest.fixture
def world(tmp_path: Path, tether_home: Path) -> Iterator[World]:
    """``build``'s world in ``tmp_path/project``, closed after the test."""
    made = build(tether_home, tmp_path / "project")
    try:
        yield made
    finally:
        made.close()


def _fleet(home: Path) -> None:
    """An embedded fleet: two workers (one silent), a project that ran, one that is paused."""
    from tether.fleet.fleet_db import FleetStore, UnitRecord
    from tether.fleet.schema import projects, signals, workers
    from tether.fleet.unit_record import record_unit

    (home / "fleet").mkdir(parents=True, exist_ok=True)
    store = FleetStore.open(f"sqlite:///{home / 'fleet' / 'fleet.db'}")
    try:
        with store.begin() as conn:
            for name, beat, lease_until in (
                ("build-1", NOW - 1, NOW + 44),
                ("laptop", NOW - 120, NOW - 75),
            ):
                conn.execute(
                    workers.insert().values(
                        name=name,
                        executor_id=name,
                        host="host",
                        pid=4000,
                        started_at=NOW - 600,
                        heartbeat_at=beat,
                        concurrency=1,
                        lease_until=lease_until,
                        epoch=1,
                        worker_group=name,
                    )
                )
        store.add_project("api", "file:///repos/api.git", "main")
        store.add_project("docs", "file:///repos/docs.git", "main")
        with store.begin() as conn:
            conn.execute(
                projects.update()
                .where(projects.c.name == "api")
                .values(holder_workflow="tether-fleet:api:x:1:1", holder_epoch=1, worker="build-1")
            )
            record_unit(
                conn,
                "sqlite",
                UnitRecord(
                    project="api",
                    seq=1,
                    workflow_id="tether-fleet:api:x:1:1",
                    worker="build-1",
                    epoch=1,
                    line="TETHER-LOOP: CONTINUE — level 1 did work, the loop goes on.",
                    exit_code=0,
                    did_work=True,
                ),
            )
            conn.execute(signals.update().values(at=NOW - 30))
            conn.execute(projects.update().where(projects.c.name == "api").values(last_at=NOW - 30))
        store.set_paused("docs", True)
    finally:
        store.close()


def _board(project: Path) -> None:
    """A board with something in each part of the panel (fixed ids and times)."""
    board = Board(project / "tickets", project)
    board.ensure()
    created = datetime(2026, 2, 1, 9, 0, tzinfo=UTC)

    def add(n: int, title: str, **fields: Any) -> None:
        board.create(NewTicket(title, **fields), ticket_id=f"T-20260201-{n:09d}", created=created)

    add(1, "Tidy the parser", priority="P2", state=State.ACTIONABLE)
    add(2, "Fix the login redirect", priority="P1", state=State.ACTIONABLE)
    add(3, "Rewrite billing", priority="P1", state=State.ACTIONABLE, front={"user_lock": "Ana"})
    add(4, "Ship 0.2", state=State.DONE)
    add(
        5,
        "Publish the docs",
        state=State.BLOCKED,
        reason="dependency",
        front={"blocked_by": "the release", "check": "T-20260201-000000004"},
    )
    add(
        6,
        "Bump the API",
        state=State.BLOCKED,
        reason="lock",
        front={"blocked_by": "the deploy lock", "check": ["test", "!", "-e", "deploy.lock"]},
    )
    add(7, "Renew the cert", state=State.WAITING, reason="scheduled", front={"until": "2026-03-01"})
    add(
        8, "Review the API", state=State.WAITING, reason="review-due", front={"until": "2026-04-01"}
    )
    add(
        9,
        "Choose the database",
        priority="P1",
        state=State.USER,
        reason="decision",
        front={"needs": "PostgreSQL or SQLite"},
    )
    add(
        10,
        "Revisit caching",
        state=State.PARKED,
        reason="until-trigger",
        front={"until": "2026-02-15"},
    )
    (board.root / "INBOX" / "idea.md").write_text("Try a faster YAML reader\n", encoding="utf-8")
    (board.root / "DONE" / "T-20260201-000000011.md").write_text(
        "---\nid: T-20260201-000000011\n---\n", encoding="utf-8"
    )


def _live_run(home: Path) -> None:
    live = add_run(
        home,
        "r-20260302-092000-aaaaaa",
        iterations=4,
        tool_calls=17,
        session_id="s-live",
        started_at=at(4),
        usage={"input_tokens": 1200, "output_tokens": 300, "cost_usd": 0.0123},
    )
    events = RunPaths(Path(live.run_dir)).events
    events.write_text('{"type":"step"}\n', encoding="utf-8")
    os.utime(events, (NOW - 5, NOW - 5))


def _ended_runs(home: Path) -> None:
    stopped = add_run(
        home,
        "r-20260302-091000-bbbbbb",
        status="iteration_limit",
        stop_reason="iteration_limit",
        exit_code=20,
        iterations=10,
        tool_calls=12,
        started_at=at(20),
        ended_at=at(15),
    )
    RunPaths(Path(stopped.run_dir)).report_md.write_text("# Progress report\n", encoding="utf-8")
    add_run(
        home,
        "r-20260302-090000-cccccc",
        unit="T-2",
        status="completed",
        stop_reason="completed",
        exit_code=0,
        iterations=3,
        started_at=at(30),
        ended_at=at(25),
    )


def _loop_and_watch(home: Path, board: str) -> None:
    conn = connect(home)
    try:
        bundle = {
            "tickets": [
                {"id": "T-9", "title": "Pick a licence", "location": "USER", "priority": "P1"}
            ],
            "items": ["TODO.md: ask about the API key"],
        }
        record_tick(
            conn,
            board,
            {
                "signal": "continue",
                "line": "TETHER-LOOP: CONTINUE — level 1 did work, the loop goes on.",
                "exit_code": 0,
                "at": at(12),
                "dry_run": False,
            },
        )
        record_tick(
            conn,
            board,
            {
                "signal": "user-only",
                "line": "TETHER-LOOP: STOP (user-only) — only USER/* items left, "
                "presented as one bundle.",
                "exit_code": 14,
                "at": at(2),
                "dry_run": False,
                "bundle": bundle,
                "level2": {"outcome": "exhausted", "sources": []},
            },
        )
        exhausted = guard.GuardState.taken(
            "exhausted",
            datetime.fromtimestamp(NOW - 120, UTC),
            guard.Fingerprint({}, ()),
            person_items=["TODO.md: ask about the API key"],
        )
        guard.save(conn, board, exhausted)
        clock = FakeClock(datetime.fromtimestamp(NOW - 3600, UTC))
        orch = add_orchestrator(
            conn, Registration(name="lead", pid=2**22 + 17, harness="claude-code"), clock=clock
        )
        record_wake(
            conn,
            WakeRecord(
                at=at(3),
                orchestrator_id=orch.id,
                reason="idle",
                subagent="pane %4 (codex)",
                pending_tool=None,
                pending_call_id=None,
                idle_seconds=310.0,
                message="A subagent finished; look at it.",
                channels=({"channel": "tmux", "ok": True, "detail": "typed"},),
                delivered=True,
            ),
        )
    finally:
        conn.close()


def _gate(home: Path) -> None:
    """Sessions near their budget, far from it, locked after a refused call (one of a run
    that has ended since: over, not shown as locked)."""
    set_session_budget(home, "s-near", calls=10)
    set_session_budget(home, "s-calm", calls=100)
    set_session_budget(home, "s-refused", calls=2)
    set_session_budget(home, "s-ended-run", calls=2, run_id="r-20260302-091000-bbbbbb")
    gconn = gate_db.connect(os.fspath(home))
    try:
        for n in range(9):
            for session in ("s-near", "s-calm"):
                seen = Seen(session, "env", "claude-code", "PreToolUse", "Bash", f"{session}-{n}")
                count_call(gconn, seen)
        for n in range(3):  # the third is refused
            for session in ("s-refused", "s-ended-run"):
                seen = Seen(session, "env", "claude-code", "PreToolUse", "Bash", f"{session}-{n}")
                count_call(gconn, seen)
        # a fixed time, so the panel reads the same on every run
        gconn.execute("UPDATE sessions SET updated_at = ?", (NOW - 30,))
    finally:
        gconn.close()


def _ingest_and_room(home: Path, project: Path, wiki_root: Path) -> World:
    queue = Queue(Wiki.open(wiki_root))
    for name in ("a.md", "b.md", "c.md"):
        source = project / name
        source.write_text(f"# {name}\n", encoding="utf-8")
        queue.collect(source)
    queue.release([queue.quarantined()[0].id])

    lock = wiki_lock_path(home, wiki_root)
    lock.parent.mkdir(parents=True, exist_ok=True)
    handle = lock.open("a+", encoding="utf-8")
    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    handle.write(f"room R-7, pid {os.getpid()}: which parser do the docs cite?")
    handle.flush()
    return World(home, project, handle)


def normalize(text: str, world: World) -> str:
    return (
        text.replace(str(world.home), "<home>")
        .replace(str(world.project), "<project>")
        .replace(str(os.getpid()), "<pid>")
    )
