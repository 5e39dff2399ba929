"""A fleet on a real PostgreSQL: three workers, six projects, every unit once, in order."""

from __future__ import annotations

import os
import shutil
import signal
import time
from datetime import datetime
from pathlib import Path

import pytest
from tests.fleet.fleet_support import Fleet, all_stopped, one_at_a_time, wait_for_live_run
from tests.support.fleet_projects import FleetProject, board_of, make_project
from tests.support.postgres import Postgres

from tether.board import State
from tether.fleet.fleet_db import FleetRun, FleetStore
from tether.fleet.places import sqlalchemy_url


def _check_project(store: FleetStore, project: FleetProject, scratch: Path) -> list[FleetRun]:
    runs = store.runs_of(project.name)
    completed = [r for r in runs if r.status == "completed"]
    board = board_of(project, scratch).load()
    done = {t.title: t for t in board.tickets if t.state is State.DONE}
    assert set(done) == set(project.titles), f"{project.name}: DONE is {sorted(done)}"
    by_ticket = {f"ticket:{t.id}": t.title for t in done.values()}
    order = [by_ticket[r.unit or ""] for r in sorted(completed, key=lambda r: r.started_at or "")]
    assert order == list(project.titles), f"{project.name}: units ran as {order}"
    one_at_a_time(runs, "units of one project")
    return runs


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_three_workers_six_projects_each_unit_once_in_order(
    tmp_path: Path, postgres: Postgres
) -> None:
    url = postgres.url("fleet_six")
    projects = [make_project(tmp_path / "repos", f"p{i}", units=3) for i in range(1, 7)]
    fleet = Fleet(tmp_path / "machine", url)
    try:
        # the workers first, all at once on a database that does not exist yet:
        # they race to create it, and the projects arrive while they run
        for name in ("w1", "w2", "w3"):
            fleet.start_worker(name, concurrency=2)
        # concurrency 2: each worker runs two executors, each one unit at a time
        fleet.wait_until("six executors", lambda s: len(s["workers"]) == 6, timeout=120)
        for p in projects:
            fleet.tether("fleet", "add", p.name, "--repo", p.url)
        status = fleet.wait_until("every project stopped", all_stopped([p.name for p in projects]))
        store = FleetStore.open(sqlalchemy_url(url))
        workers_used: set[str] = set()
        for p in projects:
            runs = _check_project(store, p, tmp_path)
            assert len(runs) == 3, f"{p.name}: {len(runs)} runs for 3 units"
            workers_used |= {r.worker for r in runs}
            lines = [line for _, _, line, _ in store.signal_lines(p.name)]
            assert lines[-1].startswith("TETHER-LOOP: STOP (exhausted)"), lines
            assert sum(line.startswith("TETHER-LOOP: CONTINUE") for line in lines) == 3
        store.close()
        executors = {f"w{i}.{k}" for i in (1, 2, 3) for k in (1, 2)}
        assert workers_used <= executors
        assert {w["name"] for w in status["workers"] if w["alive"]} == executors
        assert {w["worker"] for w in status["workers"]} == {"w1", "w2", "w3"}
        assert all(p["units_done"] == 3 for p in status["projects"])
    finally:
        fleet.stop_all()


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_worker_killed_mid_run_on_another_machine_is_followed_up_there(
    tmp_path: Path, postgres: Postgres
) -> None:
    """Two machines that share only the database: nothing of the first one's home is read."""
    url = postgres.url("fleet_kill")
    # one slow unit (8 steps of 1 s) so the kill lands mid-run, then one quick one
    project = make_project(tmp_path / "repos", "slow", units=2, steps=8, step_delay=1.0)
    machine_a = Fleet(tmp_path / "machine-a", url, dead_after=6.0)
    machine_b = Fleet(tmp_path / "machine-b", url, dead_after=6.0)
    try:
        machine_a.tether("fleet", "add", project.name, "--repo", project.url)
        first = machine_a.start_worker("first")
        run_id = wait_for_live_run(url, project.name, events=2)
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()
        killed_at = time.time()
        machine_b.start_worker("second")
        machine_b.wait_until("the project stopped", all_stopped([project.name]), timeout=240)

        store = FleetStore.open(sqlalchemy_url(url))
        runs = store.runs_of(project.name)
        store.close()
        abandoned = [r for r in runs if r.status == "abandoned"]
        assert [r.run_id for r in abandoned] == [run_id], [(r.run_id, r.status) for r in runs]
        interrupted = abandoned[0]
        assert interrupted.worker == "second"  # recorded by the worker that recovered it
        assert interrupted.report is not None and run_id in interrupted.report
        assert (interrupted.iterations or 0) >= 1  # counted from the events the database kept
        # the report was written on machine b, from the database: a's folder holds none
        assert (
            machine_b.home / "fleet" / "projects" / "slow" / "runs" / run_id / "report.md"
        ).is_file()
        assert not (
            machine_a.home / "fleet" / "projects" / "slow" / "runs" / run_id / "report.md"
        ).exists()
        follow_ups = [r for r in runs if r.follow_up_of == run_id]
        assert len(follow_ups) == 1 and follow_ups[0].status == "completed"
        assert follow_ups[0].worker == "second"
        assert datetime.fromisoformat(follow_ups[0].started_at or "").timestamp() > killed_at
        # every unit done, none twice at the same time, the second unit after the first
        board = board_of(project, tmp_path).load()
        assert {t.title for t in board.tickets if t.state is State.DONE} == set(project.titles)
        one_at_a_time(runs, "units of one project")
        recovered_line = "worker first went silent; recovered 1 unit(s)"
        assert recovered_line in machine_b.log("second")
    finally:
        machine_a.stop_all()
        machine_b.stop_all()


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_worker_waits_for_an_unreachable_database_and_loses_nothing(tmp_path: Path) -> None:
    import random
    import tempfile

    from tests.support.postgres import start_postgres

    # not under tmp_path: the server's user must be able to reach its socket folder
    folder = Path(tempfile.mkdtemp(prefix="tether-pg-late-"))
    port = random.randint(40001, 50000)
    url = f"postgresql://postgres@/fleet_late?host={folder}&port={port}"
    project = make_project(tmp_path / "repos", "late", units=1)
    fleet = Fleet(tmp_path / "machine", url)
    server = None
    try:
        fleet.start_worker("patient")
        deadline = time.monotonic() + 30
        while "unreachable" not in fleet.log("patient"):
            assert time.monotonic() < deadline, fleet.log("patient")
            time.sleep(0.2)
        time.sleep(2)  # it goes on waiting, and says so once
        assert fleet.log("patient").count("unreachable") == 1
        assert fleet.workers["patient"].poll() is None
        server = start_postgres(port, folder)
        fleet.tether("fleet", "add", project.name, "--repo", project.url)
        status = fleet.wait_until("the project stopped", all_stopped([project.name]))
        assert status["projects"][0]["units_done"] == 1
        assert "ready" in fleet.log("patient")
    finally:
        fleet.stop_all()
        if server is not None:
            server.stop()
        shutil.rmtree(folder, ignore_errors=True)
