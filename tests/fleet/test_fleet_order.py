"""The fleet's queue: units taken oldest first, one unit of a project on it at a time."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from tests.fleet.fleet_support import Fleet, all_stopped
from tests.support.fleet_projects import make_project
from tests.support.postgres import Postgres

from tether.fleet.places import sqlalchemy_url


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_units_are_taken_oldest_first(tmp_path: Path, postgres: Postgres) -> None:
    """Five projects ready at once on one executor: no unit is taken before an older one.

    The executor takes two units at a time and then one whenever one ends, so
    most of its takes choose among several projects' units. Picked at random,
    a unit is soon taken before an older one; oldest first, never.
    """
    from dbos import DBOSClient

    from tether.fleet.engine import APP_NAME, QUEUE

    url = postgres.url("fleet_order")
    projects = [make_project(tmp_path / "repos", f"o{i}", units=2) for i in range(1, 6)]
    fleet = Fleet(tmp_path / "machine", url)
    try:
        # added before the worker starts: its first heartbeat enqueues all five first units
        for p in projects:
            fleet.tether("fleet", "add", p.name, "--repo", p.url)
        fleet.start_worker("w1")
        fleet.wait_until("every project stopped", all_stopped([p.name for p in projects]))
    finally:
        fleet.stop_all()
    client = DBOSClient(system_database_url=sqlalchemy_url(url), application_name=APP_NAME)
    try:
        units = client.list_workflows(queue_name=QUEUE, load_input=False, load_output=False)
    finally:
        client.destroy()
    taken = [u for u in units if u.dequeued_at is not None]
    # per project: its first unit, then the unit whose agent ran with the closing look
    assert len(taken) == 2 * len(projects), [u.workflow_id for u in units]
    before_older = [
        (young.workflow_id, old.workflow_id)
        for young in taken
        for old in taken
        if (young.created_at or 0) > (old.created_at or 0)
        and (young.dequeued_at or 0) < (old.dequeued_at or 0)
    ]
    assert not before_older, f"taken before an older unit: {before_older}"


SUCCESSOR_PROGRAM = """
import sys, time
from dbos import DBOS
from tether.fleet import engine
from tether.fleet.workflow_context import Context, set_context

# DBOS runs in this process without taking units: it listens to another queue only
DBOS(config={"name": engine.APP_NAME, "system_database_url": sys.argv[1],
             "executor_id": "one", "application_version": engine.APP_VERSION,
             "log_level": "ERROR"})
DBOS.listen_queues(["elsewhere"])
DBOS.launch()
queue = DBOS.register_queue(engine.QUEUE, worker_concurrency=engine.UNITS_IN_HAND)
set_context(Context(store=None, lease=None, state_dir=None, workdir=None,
                    poll_interval=1.0, lease_seconds=30.0, mirror=None, queue=queue))

@DBOS.workflow(name="probe_end")
def probe_end(unit_id: str) -> str:
    engine._enqueue_successor("p", "inc", 1, 2, unit_id, None)
    return "enqueued"

unit = engine.enqueue_unit("p", "inc", 1, 1)  # the unit still holds the project's place
end = DBOS.start_workflow(probe_end, unit)
time.sleep(1.0)
held = [w.workflow_id for w in DBOS.list_queued_workflows(queue_name=engine.QUEUE)]
DBOS.cancel_workflow(unit)  # it leaves the queue, as a unit's workflow does when it ends
said = end.get_result()
after = [w.workflow_id for w in DBOS.list_queued_workflows(queue_name=engine.QUEUE)]
print(",".join(held), said, ",".join(after))
DBOS.destroy()
"""


@pytest.mark.slow  # a DBOS launch in a process of its own
def test_a_successor_waits_until_its_own_unit_left_the_queue(tmp_path: Path) -> None:
    """The unit's end enqueues the successor while the unit may still hold the place.

    Whatever holds it then is the unit itself, whose workflow ends in another
    thread: the enqueue waits for that instead of taking the unit for a newer
    chain and ending the project's chain there.
    """
    from tether.fleet.engine import workflow_id

    program = tmp_path / "successor_probe.py"
    program.write_text(SUCCESSOR_PROGRAM, encoding="utf-8")
    url = f"sqlite:///{tmp_path / 'dbos.sqlite'}"
    done = subprocess.run(
        [sys.executable, str(program), url], capture_output=True, text=True, timeout=120, check=True
    )
    held, said, after = done.stdout.split()
    assert held == workflow_id("p", "inc", 1, 1), done.stdout
    assert said == "enqueued"
    assert after == workflow_id("p", "inc", 1, 2), done.stdout
