"""A unit enqueued many times at once (by this test and by every worker's kick) runs once."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from tests.fleet.fleet_support import Fleet, all_stopped
from tests.support.fleet_projects import board_of, make_project
from tests.support.postgres import Postgres

from tether.board import State
from tether.fleet.fleet_db import FleetStore
from tether.fleet.places import sqlalchemy_url


@pytest.mark.slow  # workers and many enqueuers on PostgreSQL
@pytest.mark.timeout(600)
def test_a_unit_enqueued_many_times_at_once_runs_once(tmp_path: Path, postgres: Postgres) -> None:
    from dbos import DBOSClient

    from tether.fleet.engine import APP_NAME, APP_VERSION, QUEUE, WORKFLOW, workflow_id

    url = postgres.url("fleet_dupes")
    project = make_project(tmp_path / "repos", "dupes", units=2)
    fleet = Fleet(tmp_path / "machine", url)
    try:
        fleet.start_worker("w1")  # creates the database and DBOS's tables
        fleet.wait_until("a worker", lambda s: bool(s["workers"]), timeout=120)
        store = FleetStore.open(sqlalchemy_url(url))
        first = store.add_project(project.name, project.url, "main")
        client = DBOSClient(system_database_url=sqlalchemy_url(url), application_name=APP_NAME)
        args = (first.name, first.incarnation, first.generation, first.next_seq)
        options = {
            "queue_name": QUEUE,
            "workflow_name": WORKFLOW,
            "workflow_id": workflow_id(*args),
            "deduplication_id": first.name,
            "app_version": APP_VERSION,
        }
        threads = [threading.Thread(target=client.enqueue, args=(options, *args)) for _ in range(4)]
        for t in threads:
            t.start()
        for name in ("w2", "w3"):  # their kicks enqueue the same unit again
            fleet.start_worker(name)
        for t in threads:
            t.join(timeout=60)
        client.destroy()
        fleet.wait_until("the project stopped", all_stopped([project.name]), timeout=300)
        lines = store.signal_lines(project.name)
        runs = store.runs_of(project.name)
        store.close()
        assert [seq for seq, *_ in lines] == [1, 2, 3], lines
        assert [r.status for r in runs] == ["completed", "completed"], runs
        board = board_of(project, tmp_path).load()
        assert {t.title for t in board.tickets if t.state is State.DONE} == set(project.titles)
    finally:
        fleet.stop_all()
