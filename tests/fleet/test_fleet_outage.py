"""The fleet's database goes away in the middle of a unit, on a real PostgreSQL.

Two machines that share nothing but the database (separate tether homes).
An outage shorter than the lease changes nothing: the agent goes on, the push
and the record wait for the database, nobody takes anything over, every unit
is done once. An outage longer than the lease makes the worker stop its agent
before its lease could run out; the project then goes on with a follow-up.
"""

from __future__ import annotations

import random
import shutil
import tempfile
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import psutil
import pytest
from tests.fleet.fleet_support import Fleet, all_stopped, one_at_a_time, wait_for_live_run
from tests.support.fleet_projects import board_of, make_project
from tests.support.postgres import Postgres, start_postgres

from tether.board import State
from tether.fleet.fleet_db import FleetStore
from tether.fleet.places import sqlalchemy_url

pytestmark = pytest.mark.slow  # a PostgreSQL stopped and started again, workers, 20 s outages


@pytest.fixture
def own_postgres() -> Iterator[Postgres]:
    """A server of this test's own: it is stopped and started again in the middle."""
    folder = Path(tempfile.mkdtemp(prefix="tether-pg-outage-"))
    server = start_postgres(random.randint(40001, 50000), folder)
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)


def _agents_of(run_id: str) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter():
        try:
            if proc.environ().get("TETHER_RUN_ID") == run_id:
                found.append(proc)
        except (psutil.Error, OSError):
            continue
    return found


def _worker_lines(fleet: Fleet, name: str) -> list[str]:
    return [line for line in fleet.log(name).splitlines() if line.strip()]


@pytest.mark.timeout(900)
def test_a_20s_outage_mid_unit_changes_nothing(tmp_path: Path, own_postgres: Postgres) -> None:
    url = own_postgres.url("fleet_outage")
    project = make_project(tmp_path / "repos", "steady", units=2, steps=8, step_delay=1.0)
    machines = [Fleet(tmp_path / f"machine-{m}", url, dead_after=30.0) for m in "ab"]
    try:
        machines[0].tether("fleet", "add", project.name, "--repo", project.url)
        for fleet, name in zip(machines, ("w1", "w2"), strict=True):
            fleet.start_worker(name)
        run_id = wait_for_live_run(url, project.name, events=2)
        own_postgres.halt()
        halted = time.time()
        time.sleep(20)
        own_postgres.restart()
        machines[0].wait_until("the project stopped", all_stopped([project.name]), timeout=300)

        store = FleetStore.open(sqlalchemy_url(url))
        runs = store.runs_of(project.name)
        lines = store.signal_lines(project.name)
        store.close()
        # every unit once, each by one agent, none cancelled, abandoned or overlapping
        assert [r.status for r in runs] == ["completed", "completed"], runs
        assert run_id in {r.run_id for r in runs}
        outage_run = next(r for r in runs if r.run_id == run_id)
        assert datetime.fromisoformat(outage_run.started_at or "").timestamp() < halted
        one_at_a_time(runs, "runs of one project")
        assert [seq for seq, *_ in lines] == [1, 2, 3], lines  # no record lost or doubled
        assert lines[-1][2].startswith("TETHER-LOOP: STOP (exhausted)")
        board = board_of(project, tmp_path).load()
        assert {t.title for t in board.tickets if t.state is State.DONE} == set(project.titles)
        # a few lines per worker: ready, the database gone, back, and nothing taken over
        for fleet, name in zip(machines, ("w1", "w2"), strict=True):
            said = _worker_lines(fleet, name)
            assert len(said) <= 4, said
            assert any("reachable again" in line for line in said), said
            assert not any("went silent" in line or "lease" in line for line in said), said
            dbos_log = (fleet.home / "fleet" / "logs" / f"{name}.log").read_text(encoding="utf-8")
            assert "fleet database unreachable" in dbos_log  # DBOS's own log: the outage once
            assert "warning(s) held meanwhile" in dbos_log
    finally:
        for fleet in machines:
            fleet.stop_all()


@pytest.mark.timeout(900)
def test_a_lease_lost_mid_unit_stops_the_agent_before_it_runs_out(
    tmp_path: Path, own_postgres: Postgres
) -> None:
    url = own_postgres.url("fleet_lease")
    lease = 8.0
    project = make_project(tmp_path / "repos", "cut", units=1, steps=15, step_delay=1.0)
    fleet = Fleet(tmp_path / "machine", url, dead_after=lease)
    try:
        fleet.tether("fleet", "add", project.name, "--repo", project.url)
        fleet.start_worker("w1")
        run_id = wait_for_live_run(url, project.name, events=2)
        assert _agents_of(run_id)
        own_postgres.halt()
        halted = time.monotonic()
        # the last renewal was at most one heartbeat before the halt: the lease runs out
        # by `lease` seconds after it; the agent must be gone before that
        while _agents_of(run_id) and time.monotonic() - halted < 3 * lease:
            time.sleep(0.1)
        gone_after = time.monotonic() - halted
        assert not _agents_of(run_id)
        assert gone_after < lease, f"the agent ran {gone_after:.1f} s into a {lease} s lease"
        time.sleep(max(0.0, lease + 2 - (time.monotonic() - halted)))
        own_postgres.restart()
        fleet.wait_until("the project stopped", all_stopped([project.name]), timeout=300)

        store = FleetStore.open(sqlalchemy_url(url))
        runs = store.runs_of(project.name)
        store.close()
        first = next(r for r in runs if r.run_id == run_id)
        assert first.status == "cancelled", runs
        follow_ups = [r for r in runs if r.follow_up_of == run_id]
        assert [r.status for r in follow_ups] == ["completed"], runs
        one_at_a_time(runs, "runs of one project")
        said = _worker_lines(fleet, "w1")
        assert any("agents are stopped" in line for line in said), said
        assert any("agents may run again" in line for line in said), said
        board = board_of(project, tmp_path).load()
        assert {t.title for t in board.tickets if t.state is State.DONE} == set(project.titles)
    finally:
        fleet.stop_all()
