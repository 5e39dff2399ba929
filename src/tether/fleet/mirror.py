"""Runs kept in the fleet's database, so that no worker needs another's disk.

While a unit's run goes on, ``Mirror`` copies its record and the new lines of
its ``events.jsonl`` into the database every heartbeat. If the worker dies,
the worker that takes the unit over writes the run into its own tether home
(``adopt_orphans``): the tick's recovery then marks it ``abandoned``, writes
its report from those events and follows it up, as on one machine. Runs that
ended are brought into a worker's home the same way (``hydrate``), with their
reports, so that a follow-up or an attempt count never depends on which worker
ran the run before.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from tether.core.errors import StoreError
from tether.fleet.fleet_db import FleetDatabaseError, FleetRun, FleetStore
from tether.fleet.schema import live_runs, run_events, runs
from tether.fs import atomic_write_text
from tether.runs.record import RunPaths
from tether.store import state_db
from tether.store.runs import RunRow, insert_run, running_runs

_RUN_FIELDS = frozenset(f.name for f in fields(RunRow))
CHUNK_MAX = 1 << 20


def row_to_json(row: RunRow) -> str:
    return json.dumps(row.as_dict(), ensure_ascii=False)


def row_from_json(text: str, home: Path) -> RunRow:
    """A run's row as this worker's home keeps it: its folder here, no local process."""
    values = {k: v for k, v in json.loads(text).items() if k in _RUN_FIELDS}
    row = RunRow(**values)
    return replace(
        row,
        run_dir=str(RunPaths.for_run(home, row.id).root),
        cwd=None,
        supervisor_pid=None,
        supervisor_start_time=None,
        agent_pgid=None,
    )


def local_run_ids(conn: sqlite3.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT id FROM runs")}


class Mirror:
    """Copies the runs this process supervises into the database while they run."""

    def __init__(self, store: FleetStore, worker: str) -> None:
        self.store = store
        self.worker = worker
        self._homes: dict[str, Path] = {}  # project -> its tether home here
        self._sent: dict[str, int] = {}  # run id -> bytes of events.jsonl in the database
        self._lock = threading.Lock()

    def watch(self, project: str, home: Path) -> None:
        with self._lock:
            self._homes[project] = home

    def unwatch(self, project: str) -> None:
        with self._lock:
            self._homes.pop(project, None)

    def homes(self) -> list[Path]:
        """The homes of the units this process runs now."""
        with self._lock:
            return list(self._homes.values())

    def sync(self) -> None:
        """One pass: every running run of a watched project (database errors: next pass).

        A project home's database that cannot be opened this once (``StoreError``,
        as a disk I/O error under load) is also for the next pass: the mirror runs
        on the executor's main thread, and an error out of it would end the
        executor, and with it, as a configuration error, the whole worker.
        """
        with self._lock:
            homes = dict(self._homes)
        for project, home in homes.items():
            with contextlib.suppress(FleetDatabaseError, StoreError, sqlite3.Error, OSError):
                self._sync_home(project, home)

    def _sync_home(self, project: str, home: Path) -> None:
        conn = state_db.connect(home)
        try:
            mine = [r for r in running_runs(conn) if r.supervisor_pid == os.getpid()]
        finally:
            conn.close()
        for row in mine:
            if row.id not in self._sent:
                with self.store.begin() as tx:
                    tx.execute(live_runs.delete().where(live_runs.c.run_id == row.id))
                    tx.execute(
                        live_runs.insert().values(
                            run_id=row.id,
                            project=project,
                            worker=self.worker,
                            row_json=row_to_json(row),
                        )
                    )
                self._sent[row.id] = 0
            self._send_events(row)

    def _send_events(self, row: RunRow) -> None:
        path = RunPaths(Path(row.run_dir)).events
        start = self._sent[row.id]
        try:
            with path.open("rb") as f:
                f.seek(start)
                data = f.read(CHUNK_MAX)
        except FileNotFoundError:
            return
        end = data.rfind(b"\n") + 1  # whole lines only
        if end == 0:
            return
        with self.store.begin() as tx:
            tx.execute(run_events.insert().values(run_id=row.id, start=start, data=data[:end]))
        self._sent[row.id] = start + end


def forget_live(conn: sa.Connection | Any, run_ids: list[str]) -> None:
    """Runs that ended and are recorded: their copies in progress are not needed any more."""
    if run_ids:
        conn.execute(live_runs.delete().where(live_runs.c.run_id.in_(run_ids)))
        conn.execute(run_events.delete().where(run_events.c.run_id.in_(run_ids)))


@dataclass(frozen=True)
class Recorded:
    """What the database holds of a project's runs, read in one transaction before a tick."""

    run_ids: list[str]  # runs recorded by units that ended
    live: list[Any]  # rows of runs in progress (``live_runs``), mirrored by their worker


def recorded_runs(store: FleetStore, project: str) -> Recorded:
    with store.begin() as tx:
        ids = tx.execute(sa.select(runs.c.run_id).where(runs.c.project == project)).scalars()
        live = tx.execute(sa.select(live_runs).where(live_runs.c.project == project)).all()
        return Recorded(list(ids), list(live))


def adopt_orphans(
    store: FleetStore, home: Path, conn: sqlite3.Connection, rows: list[Any]
) -> list[str]:
    """Runs a dead worker left (``Recorded.live``), written into this home as still running.

    Only called by the execution that holds the project's unit, which it could
    take only once the worker before had lost its lease: whatever is in
    progress for the project is that worker's.
    """
    adopted: list[str] = []
    present = local_run_ids(conn) if rows else set()
    for live in rows:
        if live.run_id in present:
            continue  # this home ran it (the same worker, started again)
        row = row_from_json(live.row_json, home)
        paths = RunPaths(Path(row.run_dir))
        paths.root.mkdir(parents=True, exist_ok=True)
        with store.begin() as tx:
            chunks = tx.execute(
                sa.select(run_events.c.data)
                .where(run_events.c.run_id == live.run_id)
                .order_by(run_events.c.start)
            ).scalars()
            paths.events.write_bytes(b"".join(chunks))
        insert_run(conn, replace(row, status="running"))
        adopted.append(row.id)
    return adopted


def hydrate(store: FleetStore, home: Path, conn: sqlite3.Connection, run_ids: list[str]) -> int:
    """Recorded runs (``Recorded.run_ids``) that this home lacks, with their reports, into it."""
    missing = sorted(set(run_ids) - local_run_ids(conn))
    brought = 0
    for run in store.runs_by_id(missing):
        if run.row_json is None:
            continue  # recorded by an earlier version: no whole row to bring
        row = row_from_json(run.row_json, home)
        paths = RunPaths(Path(row.run_dir))
        paths.root.mkdir(parents=True, exist_ok=True)
        if run.report is not None:
            atomic_write_text(paths.report_md, run.report)
        insert_run(conn, row)
        brought += 1
    return brought


def fleet_runs(
    conn: sqlite3.Connection,
    run_ids: list[str],
    *,
    project: str,
    seq: int,
    worker: str,
    workflow_id: str,
) -> list[FleetRun]:
    """The unit's runs as the fleet's database keeps them: record, whole row and report."""
    from tether.store.runs import get_run

    found: list[FleetRun] = []
    for run_id in run_ids:
        row = get_run(conn, run_id)
        report = RunPaths(Path(row.run_dir)).report_md
        found.append(
            FleetRun(
                run_id=row.id,
                project=project,
                seq=seq,
                worker=worker,
                unit=row.unit,
                status=row.status,
                exit_code=row.exit_code,
                follow_up_of=row.follow_up_of,
                iterations=row.iterations,
                tool_calls=row.tool_calls,
                started_at=row.started_at,
                ended_at=row.ended_at,
                report=report.read_text(encoding="utf-8") if report.is_file() else None,
                workflow_id=workflow_id,
                row_json=row_to_json(row),
            )
        )
    return found
