"""An executor holds a unit in hand while it ticks another: one tick at a time, and a stop
never starts the unit in hand.

The executor's queue takes two units at once (the next one dequeued while an
agent runs); its turn lets only one of them take its project and tick. A unit
in hand whose project this machine has no clone of yet clones it meanwhile.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest
from tests.fleet.fleet_support import Fleet, all_stopped, one_at_a_time
from tests.support.fleet_projects import board_of, make_project
from tests.support.postgres import Postgres

from tether.board import State
from tether.fleet.fleet_db import FleetStore
from tether.fleet.places import sqlalchemy_url


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_one_executor_runs_one_agent_at_a_time_with_a_unit_in_hand(
    tmp_path: Path, postgres: Postgres
) -> None:
    url = postgres.url("fleet_turn")
    made = [
        make_project(tmp_path / "repos", f"t{i}", units=2, steps=2, step_delay=0.3)
        for i in range(3)
    ]
    fleet = Fleet(tmp_path / "machine", url)
    try:
        fleet.start_worker("a")  # one executor: its queue takes two units at once
        fleet.wait_until("a worker", lambda s: bool(s["workers"]), timeout=120)
        store = FleetStore.open(sqlalchemy_url(url))
        for p in made:
            store.add_project(p.name, p.url, "main")
        fleet.wait_until("every project stopped", all_stopped([p.name for p in made]), timeout=300)
        runs = [r for p in made for r in store.runs_of(p.name)]
        store.close()
    finally:
        fleet.stop_all()
    assert len(runs) == 6 and {r.status for r in runs} == {"completed"}, runs
    one_at_a_time(runs, "agents of one executor")


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_stopped_worker_never_starts_its_unit_in_hand(tmp_path: Path, postgres: Postgres) -> None:
    from dbos import DBOSClient

    from tether.fleet.engine import APP_NAME, workflow_id

    url = postgres.url("fleet_turn_stop")
    ticking = make_project(tmp_path / "repos", "ticking", units=1, steps=2, step_delay=4.0)
    in_hand = make_project(tmp_path / "repos", "inhand", units=1)
    fleet = Fleet(tmp_path / "machine", url)
    try:
        first = fleet.start_worker("a")
        fleet.wait_until("a worker", lambda s: bool(s["workers"]), timeout=120)
        store = FleetStore.open(sqlalchemy_url(url))
        store.add_project(ticking.name, ticking.url, "main")
        fleet.wait_until(
            "the first project's unit",
            lambda s: any(p["worker"] == "a" for p in s["projects"]),
        )
        added = store.add_project(in_hand.name, in_hand.url, "main")
        wid = workflow_id(added.name, added.incarnation, added.generation, added.next_seq)
        client = DBOSClient(system_database_url=sqlalchemy_url(url), application_name=APP_NAME)
        try:
            deadline = time.monotonic() + 60
            while True:  # dequeued by executor a, waiting for its turn
                found = client.list_workflows(workflow_ids=[wid], load_input=False)
                if found and found[0].status == "PENDING" and found[0].executor_id == "a":
                    break
                assert time.monotonic() < deadline, f"never in hand: {found}"
                time.sleep(0.1)
        finally:
            client.destroy()
        clone = fleet.home / "fleet" / "work" / in_hand.name / ".git"
        deadline = time.monotonic() + 30
        while not clone.is_dir():  # a project new to this machine is cloned while in hand
            assert time.monotonic() < deadline, "the unit in hand was not cloned ahead"
            time.sleep(0.1)
        assert not any(r.status == "completed" for r in store.runs_of(ticking.name))
        assert not store.runs_of(in_hand.name)
        os.killpg(first.pid, signal.SIGTERM)  # a clean stop while the first unit's agent runs
        assert first.wait(timeout=60) == 0
        fleet.start_worker("b")
        fleet.wait_until(
            "both projects stopped", all_stopped([ticking.name, in_hand.name]), timeout=300
        )
        runs = store.runs_of(in_hand.name)
        store.close()
        # the unit in hand never started on a: b ran it, once, whole
        assert [(r.worker, r.status) for r in runs] == [("b", "completed")], runs
        log = fleet.log("b")
        assert "went silent" not in log  # a released its lease when it stopped
        assert "worker a stopped; took up" in log
        for project in (ticking, in_hand):
            board = board_of(project, tmp_path).load()
            assert {t.title for t in board.tickets if t.state is State.DONE} == set(project.titles)
    finally:
        fleet.stop_all()
