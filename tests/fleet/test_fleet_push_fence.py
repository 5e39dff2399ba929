"""The push step pushes only while its worker holds the unit, with lease left for the whole push.

Between the push step's start and its push, the worker's lease may run out
and a rescuer take the unit over: the rescuer then pushes the same commit from
its bundle. The fence in the transaction that reads the project just before
git runs (``hold_for_write``) is what keeps the stale worker from pushing as
well; the lease left that it asks for keeps anyone from taking over while git
runs. Each race is forced at that moment on a
real PostgreSQL, with real git repositories; nothing is faked.
"""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.support.fleet_projects import FleetProject, make_project
from tests.support.postgres import Postgres

from tether.fleet import engine
from tether.fleet.fleet_db import FencedError, FleetStore
from tether.fleet.git import bundle, commit_all, prepare_clone
from tether.fleet.leases import Lease, claim_expired, hold_for_write, register, take_unit
from tether.fleet.mirror import Mirror
from tether.fleet.places import sqlalchemy_url
from tether.fleet.schema import server_now, workers
from tether.fleet.unit import UnitOutcome
from tether.fleet.worker import ensure_database
from tether.fleet.workflow_context import Context, RetryLaterError

LEASE = 30.0


@pytest.fixture
def store(postgres: Postgres, request: pytest.FixtureRequest) -> Iterator[FleetStore]:
    name = "fence_" + request.node.name.removeprefix("test_")[:40]
    url = sqlalchemy_url(postgres.url(name))
    stop = threading.Event()
    stop.set()
    ensure_database(url, lambda line: None, stop)
    opened = FleetStore.open(url)
    try:
        yield opened
    finally:
        opened.close()


def _worker(store: FleetStore, name: str) -> Lease:
    # a pid that runs nowhere: the workers here are rows; the steps run in this process
    return register(store, name=name, group=name, host="h", pid=2**22 + 7, seconds=LEASE)


def _context(store: FleetStore, lease: Lease, machine: Path) -> Context:
    return Context(
        store=store,
        lease=lease,
        state_dir=machine / "state",
        workdir=machine / "work",
        poll_interval=3600.0,
        lease_seconds=LEASE,
        mirror=Mirror(store, lease.worker),
    )


def _remote_head(project: FleetProject) -> str:
    done = subprocess.run(
        ["git", "rev-parse", "main"], cwd=project.bare, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def _unit_with_a_commit(
    store: FleetStore, ctx: Context, project: FleetProject
) -> tuple[str, str, UnitOutcome]:
    """The project's unit 1 taken by ``ctx``'s worker and committed in its clone, not pushed."""
    added = store.add_project(project.name, project.url, "main")
    wid = engine.workflow_id(project.name, added.incarnation, added.generation, 1)
    held, _ = take_unit(
        store,
        project=project.name,
        incarnation=added.incarnation,
        generation=added.generation,
        workflow_id=wid,
        lease=ctx.lease,
    )
    assert held is None
    clone = ctx.workdir / project.name
    base = prepare_clone(clone, project.url, "main")
    (clone / "RESULT.md").write_text("the unit's work\n", encoding="utf-8")
    commit = commit_all(clone, "unit 1", wid)
    assert commit is not None
    ctx.made.add(commit)  # as the run step does: this process made it, a first push
    outcome = UnitOutcome("CONTINUE", 0, False, commit=commit, bundle=bundle(clone, base))
    return added.incarnation, wid, outcome


def test_a_worker_taken_over_between_its_check_and_its_push_does_not_push(
    store: FleetStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = make_project(tmp_path / "repos", "fenced", units=1)
    stale = _context(store, _worker(store, "stale"), tmp_path / "machine-a")
    rescuer = _context(store, _worker(store, "rescuer"), tmp_path / "machine-b")
    incarnation, wid, outcome = _unit_with_a_commit(store, stale, project)
    before = _remote_head(project)
    taken_over: list[str] = []

    def after_the_lease_ran_out(conn: Any, dialect: str, *args: Any) -> bool | None:
        if args[2] == stale.lease and not taken_over:
            # the stale worker's push step has begun; now its lease runs out and the
            # rescuer claims it and takes the unit over, before the stale worker's fence
            with store.begin() as other:
                other.execute(
                    workers.update().where(workers.c.name == "stale").values(lease_until=0.0)
                )
            taken_over.extend(w.name for w in claim_expired(store, rescuer.lease))
            again = dict(
                project=project.name, incarnation=incarnation, generation=None,
                workflow_id=wid, lease=rescuer.lease,
            )  # fmt: skip
            assert take_unit(store, **again)[0] is None  # type: ignore[arg-type]
        return hold_for_write(conn, dialect, *args)

    monkeypatch.setattr(engine, "hold_for_write", after_the_lease_ran_out)
    try:
        said: object = engine.push_held_unit(stale, project.name, incarnation, wid, outcome)
    except FencedError as exc:
        said = exc
    assert taken_over == ["stale"]
    assert _remote_head(project) == before, f"a worker that lost the unit pushed it: {said}"
    assert isinstance(said, FencedError)  # its workflow waits for the executor's end
    # the rescuer, which holds the unit now, pushes it from the bundle: once
    pushed = engine.push_held_unit(rescuer, project.name, incarnation, wid, outcome)
    assert pushed.pushed == _remote_head(project) != before
    assert project.remote_log("%s").count("unit 1") == 1


def test_a_push_waits_while_the_lease_is_too_short_for_it(
    store: FleetStore, tmp_path: Path
) -> None:
    project = make_project(tmp_path / "repos", "short", units=1)
    ctx = _context(store, _worker(store, "w"), tmp_path / "machine")
    incarnation, wid, outcome = _unit_with_a_commit(store, ctx, project)
    before = _remote_head(project)
    # the lease is still the worker's, but would run out before a push that hangs
    # until its timeout could give up: nobody may take over before then, so wait
    left = ctx.push_needs / 2
    with store.begin() as conn:
        conn.execute(
            workers.update()
            .where(workers.c.name == "w")
            .values(lease_until=server_now(store.dialect) + left)
        )
    try:
        said: object = engine.push_held_unit(ctx, project.name, incarnation, wid, outcome)
    except RetryLaterError as exc:
        said = exc
    assert _remote_head(project) == before, f"a push started without lease left for it: {said}"
    assert "lease of w ends in" in str(said)  # DBOS retries the step after a renewal
    with store.begin() as conn:
        conn.execute(
            workers.update()
            .where(workers.c.name == "w")
            .values(lease_until=server_now(store.dialect) + LEASE)
        )
    pushed = engine.push_held_unit(ctx, project.name, incarnation, wid, outcome)
    assert pushed.pushed == _remote_head(project) != before
