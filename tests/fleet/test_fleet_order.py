"""The fleet's queue hands out units oldest first, whichever project they belong to."""

from __future__ import annotations

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
