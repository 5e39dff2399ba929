"""Leases on the database server's clock, claims by compare-and-set, the holder's checks.

Each race is forced at the moment it matters (a renewal between a rescuer's
look and its claim, two rescuers that both saw a worker expire), on a real
PostgreSQL. Each test fails when the guard it is about is taken out.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import sqlalchemy as sa
from tests.support.postgres import Postgres

from tether.fleet import leases
from tether.fleet.fleet_db import FencedError, FleetError, FleetStore, UnitRecord
from tether.fleet.leases import (
    Lease,
    UnitHeldError,
    claim_expired,
    hold_for_write,
    register,
    renew,
    take_unit,
)
from tether.fleet.places import sqlalchemy_url
from tether.fleet.schema import workers
from tether.fleet.unit_record import record_unit
from tether.fleet.worker import ensure_database


@pytest.fixture
def store(postgres: Postgres, request: pytest.FixtureRequest) -> Iterator[FleetStore]:
    name = "leases_" + request.node.name.removeprefix("test_")[:40]
    url = sqlalchemy_url(postgres.url(name))
    stop = threading.Event()
    stop.set()
    ensure_database(url, lambda line: None, stop)
    opened = FleetStore.open(url)
    try:
        yield opened
    finally:
        opened.close()


def _worker(store: FleetStore, name: str, seconds: float = 30.0, host: str = "h") -> Lease:
    # a pid that runs nowhere: every "worker" here is a row, not a process
    return register(store, name=name, group=name, host=host, pid=2**22 + 7, seconds=seconds)


def _expire(store: FleetStore, name: str) -> None:
    with store.begin() as conn:
        conn.execute(workers.update().where(workers.c.name == name).values(lease_until=0.0))


def test_a_live_worker_is_never_claimed_whatever_the_rescuers_clock(
    store: FleetStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    live = _worker(store, "live")
    rescuer = _worker(store, "rescuer")
    # the rescuer's machine is an hour ahead: a lease on its own clock would look dead
    real = time.time
    monkeypatch.setattr(time, "time", lambda: real() + 3600)
    assert claim_expired(store, rescuer) == []
    renew(store, live, 30.0)  # still its lease, same epoch


def test_a_renewal_between_look_and_claim_wins(
    store: FleetStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The claim's compare-and-set: the rescuer saw the lease expired, then it was renewed."""
    slow = _worker(store, "slow", seconds=30.0)
    rescuer = _worker(store, "rescuer")
    _expire(store, "slow")
    real_valid = leases._still_valid
    renewed: list[float] = []

    def renew_first(conn: Any, dialect: str, lease: Lease) -> bool:
        if not renewed:  # the slow worker's renewal lands just before the claim's update
            renewed.append(renew(store, slow, 30.0))
        return real_valid(conn, dialect, lease)

    monkeypatch.setattr(leases, "_still_valid", renew_first)
    assert claim_expired(store, rescuer) == []
    assert renewed
    renew(store, slow, 30.0)  # not fenced: nobody took its units


def _race_round(store: FleetStore, monkeypatch: pytest.MonkeyPatch, round_: int) -> None:
    dead = _worker(store, f"dead{round_}")
    rescuers = [_worker(store, f"r{round_}a"), _worker(store, f"r{round_}b")]
    _expire(store, dead.worker)
    both_looked = threading.Barrier(2)
    real_valid = leases._still_valid

    def after_both_looked(conn: Any, dialect: str, lease: Lease) -> bool:
        both_looked.wait(timeout=10)
        return real_valid(conn, dialect, lease)

    monkeypatch.setattr(leases, "_still_valid", after_both_looked)
    won: dict[str, list[str]] = {}

    def claim(rescuer: Lease) -> None:
        got = claim_expired(store, rescuer)
        won[rescuer.worker] = [w.name for w in got if w.name == dead.worker]

    threads = [threading.Thread(target=claim, args=(r,)) for r in rescuers]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    monkeypatch.setattr(leases, "_still_valid", real_valid)
    winners = [name for name, got in won.items() if got]
    assert len(winners) == 1, won
    with pytest.raises(FencedError):
        renew(store, dead, 30.0)  # the dead worker's epoch is over for good
    for rescuer in rescuers:
        renew(store, rescuer, 30.0)


def test_of_two_rescuers_exactly_one_claims(
    store: FleetStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    for round_ in range(5):
        _race_round(store, monkeypatch, round_)


def test_a_name_held_by_a_live_worker_elsewhere_is_refused(store: FleetStore) -> None:
    _worker(store, "taken", host="machine-a")
    with pytest.raises(FleetError, match="is alive"):
        _worker(store, "taken", host="machine-b")


def _project_held_by(store: FleetStore, lease: Lease, wid: str) -> None:
    project = store.add_project("p", "file:///p.git", "main")
    assert (
        take_unit(
            store,
            project="p",
            incarnation=project.incarnation,
            generation=1,
            workflow_id=wid,
            lease=lease,
        )[0]
        is None
    )


def test_a_unit_held_by_a_live_worker_is_not_taken_and_a_dead_ones_is(store: FleetStore) -> None:
    a = _worker(store, "a")
    b = _worker(store, "b")
    _project_held_by(store, a, "wf-1")
    incarnation = store.project("p").incarnation
    take = dict(project="p", incarnation=incarnation, generation=1, workflow_id="wf-1", lease=b)
    with pytest.raises(UnitHeldError):
        take_unit(store, **take)  # type: ignore[arg-type]
    _expire(store, "a")
    assert take_unit(store, **take)[0] is None  # type: ignore[arg-type]
    assert store.project("p").worker == "b"


def test_only_the_holder_pushes_or_records(store: FleetStore) -> None:
    a = _worker(store, "a")
    _project_held_by(store, a, "wf-1")
    record = UnitRecord(
        project="p", seq=1, workflow_id="wf-1", worker="a", epoch=a.epoch, line="L", exit_code=0,
        did_work=True,
    )  # fmt: skip
    with store.begin() as conn:
        assert hold_for_write(conn, store.dialect, "p", "wf-1", a, 5.0)
    # another worker claims a (its lease ran out): a may neither push nor record any more
    rescuer = _worker(store, "rescuer")
    _expire(store, "a")
    assert [w.name for w in claim_expired(store, rescuer)] == ["a"]
    with pytest.raises(FencedError), store.begin() as conn:
        hold_for_write(conn, store.dialect, "p", "wf-1", a, 5.0)
    with pytest.raises(FencedError), store.begin() as conn:
        record_unit(conn, store.dialect, record)
    assert store.signal_lines("p") == []
    # an execution of another workflow for the project is no holder either: it may write
    # nothing until take_unit gave it the unit
    with store.begin() as conn:
        assert hold_for_write(conn, store.dialect, "p", "wf-2", rescuer, 5.0) is None
    with store.begin() as conn:
        held = conn.execute(sa.text("SELECT worker FROM tether_fleet_projects")).scalar_one()
    assert held == "a"


def _record(lease: Lease, wid: str = "wf-1", line: str = "L") -> UnitRecord:
    return UnitRecord(
        project="p", seq=1, workflow_id=wid, worker=lease.worker, epoch=lease.epoch, line=line,
        exit_code=0, did_work=True,
    )  # fmt: skip


def _holder(store: FleetStore) -> tuple[str | None, str | None, int | None]:
    with store.begin() as conn:
        row = conn.execute(
            sa.text("SELECT holder_workflow, worker, holder_epoch FROM tether_fleet_projects")
        ).one()
    return row[0], row[1], row[2]


def test_a_rescuer_records_a_dead_workers_unit_in_the_records_own_transaction(
    store: FleetStore,
) -> None:
    """A replay on the rescuer: no step of its own takes the unit over before the record."""
    a = _worker(store, "a")
    _project_held_by(store, a, "wf-1")
    rescuer = _worker(store, "rescuer")
    _expire(store, "a")
    assert [w.name for w in claim_expired(store, rescuer)] == ["a"]
    with store.begin() as conn:
        assert record_unit(conn, store.dialect, _record(rescuer, line="by the rescuer")) is True
    assert [line for _, _, line, _ in store.signal_lines("p")] == ["by the rescuer"]
    assert _holder(store) == (None, None, None)
    # the dead worker's own record, had it got that far, writes nothing
    with pytest.raises(FencedError), store.begin() as conn:
        record_unit(conn, store.dialect, _record(a, line="by the dead worker"))
    assert len(store.signal_lines("p")) == 1


def test_a_record_never_takes_the_unit_from_a_holder_that_may_still_renew(
    store: FleetStore,
) -> None:
    """Only an epoch that is over gives the unit up: a lease that ran out may be renewed."""
    a = _worker(store, "a")
    _project_held_by(store, a, "wf-1")
    other = _worker(store, "other")
    with store.begin() as conn:  # a live holder
        assert record_unit(conn, store.dialect, _record(other)) is None
    _expire(store, "a")  # its lease ran out, nobody claimed it yet
    with store.begin() as conn:
        assert record_unit(conn, store.dialect, _record(other)) is None
    assert store.signal_lines("p") == []
    assert _holder(store) == ("wf-1", "a", a.epoch)
    renew(store, a, 30.0)  # it was only slow: the unit is still its own to record
    with store.begin() as conn:
        assert record_unit(conn, store.dialect, _record(a, line="by a")) is True
    assert [line for _, _, line, _ in store.signal_lines("p")] == ["by a"]


def test_a_record_takes_over_only_a_unit_of_its_own_workflow(store: FleetStore) -> None:
    a = _worker(store, "a")
    _project_held_by(store, a, "wf-1")
    rescuer = _worker(store, "rescuer")
    _expire(store, "a")
    assert [w.name for w in claim_expired(store, rescuer)] == ["a"]
    with store.begin() as conn:
        assert record_unit(conn, store.dialect, _record(rescuer, wid="wf-2")) is None
    assert store.signal_lines("p") == []
    assert _holder(store) == ("wf-1", "a", a.epoch)


def test_a_claim_of_a_recording_worker_waits_for_its_record(store: FleetStore) -> None:
    """The record needs no lease time left because no claim can land inside it."""
    r = _worker(store, "r")
    _project_held_by(store, r, "wf-1")
    claimer = _worker(store, "claimer")
    looked, go = threading.Event(), threading.Event()
    _expire(store, "r")  # its lease has run out; nobody has claimed it yet

    def record() -> None:
        with store.begin() as conn:
            assert record_unit(conn, store.dialect, _record(r)) is True
            looked.set()
            go.wait(timeout=30)

    recorder = threading.Thread(target=record)
    recorder.start()
    assert looked.wait(timeout=30)
    claimed: list[str] = []
    claim = threading.Thread(
        target=lambda: claimed.extend(w.name for w in claim_expired(store, claimer))
    )
    claim.start()
    claim.join(timeout=1.0)
    blocked = claim.is_alive()  # it cannot finish while the record's transaction is open
    go.set()
    recorder.join(timeout=30)
    claim.join(timeout=30)
    assert blocked, "a claim went through while the worker's record was being written"
    assert claimed == ["r"]  # then it does: after the record, which it re-runs nothing of
    assert len(store.signal_lines("p")) == 1
