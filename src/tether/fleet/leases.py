"""Who may run what: every worker holds a lease on the database server's clock.

A worker process takes its name with a new *epoch* (``register``), then renews
its lease every heartbeat (``renew``): valid until the server's ``now()`` plus
``dead_after``, and only for that epoch. Another worker may take over a worker's
units only once that lease has run out by the server's clock, and only through
a compare-and-set on the epoch (``claim_expired``), so exactly one rescuer wins
and a live worker is never claimed. A worker that cannot renew stops its
agents before its lease could run out (``tether.fleet.keeper``), and every
push or record a unit makes first checks, in its own transaction, that it
still holds the unit (``hold_for_write``): the unit's workflow, this worker,
this epoch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import psutil
import sqlalchemy as sa

from tether.fleet.fleet_db import (
    FencedError,
    FleetError,
    FleetStore,
    Project,
    Worker,
    project_of,
    to_kick_query,
)
from tether.fleet.schema import projects, server_now, workers


@dataclass(frozen=True)
class Lease:
    """This process's hold on its worker name: the name and the epoch it registered."""

    worker: str
    epoch: int


class LeaseShortError(Exception):
    """The lease is still ours but too short for what comes next: wait for a renewal."""


class RecoveryInProgressError(Exception):
    """Another worker is still re-enqueueing this worker's units: wait for it."""


class UnitHeldError(Exception):
    """A live worker holds the project's unit: this execution must wait, not run."""


def process_start_time() -> float:
    return psutil.Process().create_time()


def _predecessor_gone(row: Worker, host: str) -> bool:
    """The name's last holder is a process of this host that no longer runs."""
    if row.host != host:
        return False
    try:
        proc = psutil.Process(row.pid)
    except psutil.NoSuchProcess:
        return True
    return abs(proc.create_time() - row.started_at) > 1.0


def register(
    store: FleetStore, *, name: str, group: str, host: str, pid: int, seconds: float
) -> Lease:
    """Take the worker name for this process, fencing whatever held it before.

    Refused (``FleetError``) while another live process holds the name;
    ``RecoveryInProgressError`` while a rescuer is still re-enqueueing the
    units of this name's previous process.
    """
    now_sql = server_now(store.dialect)
    started = process_start_time()
    with store.begin() as conn:
        now = float(conn.execute(sa.select(now_sql)).scalar_one())
        found = conn.execute(
            sa.select(workers).where(workers.c.name == name).with_for_update()
        ).first()
        if found is None:
            conn.execute(
                workers.insert().values(
                    name=name,
                    executor_id=name,
                    host=host,
                    pid=pid,
                    started_at=started,
                    heartbeat_at=now,
                    concurrency=1,
                    lease_until=now + seconds,
                    epoch=1,
                    worker_group=group,
                )
            )
            return Lease(name, 1)
        row = Worker(**found._mapping)
        if row.recovery == "recovering":
            raise RecoveryInProgressError(name)
        left = (row.lease_until or 0.0) - now
        if left > 0 and row.recovered_by is None and not _predecessor_gone(row, host):
            raise FleetError(
                f"a worker named {name} is alive (host {row.host}, pid {row.pid}, lease "
                f"for {left:.0f} s more); give this one another --name"
            )
        epoch = (row.epoch or 0) + 1
        conn.execute(
            workers.update()
            .where(workers.c.name == name)
            .values(
                executor_id=name,
                host=host,
                pid=pid,
                started_at=started,
                heartbeat_at=now,
                lease_until=now + seconds,
                epoch=epoch,
                recovered_by=None,
                recovery=None,
                worker_group=group,
            )
        )
    return Lease(name, epoch)


def renew(store: FleetStore, lease: Lease, seconds: float) -> float:
    """Extend the lease by ``seconds`` from the server's now; the new end (server clock).

    ``FencedError`` when the epoch is no longer ours: another worker took our units.
    """
    now_sql = server_now(store.dialect)
    with store.begin() as conn:
        done = conn.execute(
            workers.update()
            .where(workers.c.name == lease.worker)
            .where(workers.c.epoch == lease.epoch)
            .values(lease_until=now_sql + seconds, heartbeat_at=now_sql)
            .returning(workers.c.lease_until)
        ).first()
    if done is None:
        raise FencedError(f"worker {lease.worker}'s lease (epoch {lease.epoch}) was taken over")
    return float(done[0])


def release(store: FleetStore, lease: Lease) -> None:
    """A worker that stops cleanly, its units all ended: its lease ends at once.

    Marked ``released``: the worker that claims it still recovers whatever
    DBOS had dequeued for it and not started, but has no death to report.
    """
    now_sql = server_now(store.dialect)
    with store.begin() as conn:
        conn.execute(
            workers.update()
            .where(workers.c.name == lease.worker)
            .where(workers.c.epoch == lease.epoch)
            .values(lease_until=now_sql - 1.0, recovery="released")
        )


def _still_valid(conn: sa.Connection, dialect: str, lease: Lease) -> bool:
    row = conn.execute(
        sa.select(workers.c.name)
        .where(workers.c.name == lease.worker)
        .where(workers.c.epoch == lease.epoch)
        .where(workers.c.lease_until > server_now(dialect))
    ).first()
    return row is not None


@dataclass(frozen=True)
class FleetLook:
    """One heartbeat's read of the fleet: the server's clock, every worker, what to kick."""

    now: float
    workers: list[Worker]
    to_kick: list[Project]


def look(store: FleetStore) -> FleetLook:
    """What a worker's heartbeat needs, read in one transaction.

    Every executor reads this each heartbeat; one transaction instead of one
    for the claims and one for the kicks is a round of connection checkout,
    BEGIN and COMMIT less per heartbeat, on every executor of the fleet.
    """
    with store.begin() as conn:
        now = float(conn.execute(sa.select(server_now(store.dialect))).scalar_one())
        rows = [Worker(**r._mapping) for r in conn.execute(sa.select(workers)).all()]
        kick = conn.execute(to_kick_query()).all()
    return FleetLook(now, rows, [project_of(r._mapping) for r in kick])


def claim_expired(store: FleetStore, rescuer: Lease, seen: FleetLook | None = None) -> list[Worker]:
    """Workers whose lease ran out by the server's clock, each now claimed by ``rescuer``.

    ``seen``: the heartbeat's read, when it was just made (else it is read here).
    One compare-and-set per worker, on the epoch it had when seen expired and
    on its lease still being expired: of several rescuers exactly one wins, and
    a worker that renewed in the meantime is left alone. The rescuer must hold
    a valid lease itself. Each claimed worker is left ``recovering`` until the
    rescuer calls ``recovered``.
    """
    dialect = store.dialect
    now_sql = server_now(dialect)
    seen = seen or look(store)
    now, rows = seen.now, seen.workers
    leases = {w.name: w.lease_until or 0.0 for w in rows}
    claimed: list[Worker] = []
    for row in rows:
        if row.name == rescuer.worker or row.lease_until is None or row.lease_until >= now:
            continue
        if row.recovery == "done":
            continue
        if row.recovery == "recovering" and leases.get(row.recovered_by or "", 0.0) >= now:
            continue  # its rescuer lives and is at it
        with store.begin() as conn:
            if not _still_valid(conn, dialect, rescuer):
                raise FencedError(f"worker {rescuer.worker} lost its own lease")
            won = conn.execute(
                workers.update()
                .where(workers.c.name == row.name)
                .where(workers.c.epoch == row.epoch)
                .where(workers.c.lease_until < now_sql)
                .values(
                    epoch=(row.epoch or 0) + 1,
                    recovered_by=rescuer.worker,
                    recovery="recovering",
                )
            ).rowcount
        if won:
            claimed.append(row)
    return claimed


def recovered(store: FleetStore, name: str, rescuer: Lease) -> None:
    with store.begin() as conn:
        conn.execute(
            workers.update()
            .where(workers.c.name == name)
            .where(workers.c.recovered_by == rescuer.worker)
            .values(recovery="done")
        )


def hold_for_write(
    conn: sa.Connection | Any,
    dialect: str,
    project: str,
    workflow_id: str,
    lease: Lease,
    min_left: float | None,
) -> bool | None:
    """In the transaction of a push's look or a record: whether this execution holds the unit.

    True: it holds it, or has just taken it over because the holder was another
    execution of this same workflow whose worker's epoch is over (a rescuer, or
    the executor started again, replaying a unit its dead predecessor had
    begun): no separate step is needed for that. False: the project is gone.
    None: anything else (a live holder, a holder of another workflow, a free
    unit, this worker's lease not valid now): nothing may be written here, and
    ``take_unit`` decides in a step of its own (waiting while a live worker
    holds the unit). ``FencedError`` when this worker's own epoch is over.

    ``LeaseShortError`` when the lease is ours but ends in less than
    ``min_left`` seconds (the caller waits for a renewal); ``None``: no time
    condition, for a write that commits atomically with the unit's checkpoint
    (a claim that comes after it re-runs nothing). The worker row is read
    ``FOR SHARE`` on PostgreSQL: a claim waits until this transaction ends. An
    epoch that is over never comes back, so a holder seen with an ended epoch
    can never write again; a holder whose lease merely ran out may still renew
    and is left to ``take_unit``.
    """
    held = conn.execute(
        sa.select(projects.c.holder_workflow, projects.c.holder_epoch, projects.c.worker)
        .where(projects.c.name == project)
        .with_for_update()
    ).first()
    if held is None:
        return False
    own = conn.execute(
        sa.select(workers.c.epoch, (workers.c.lease_until - server_now(dialect)).label("left"))
        .where(workers.c.name == lease.worker)
        .with_for_update(read=True)
    ).first()
    if own is None or own.epoch != lease.epoch:
        raise FencedError(f"worker {lease.worker}'s lease (epoch {lease.epoch}) was taken over")
    mine = (held.holder_workflow, held.worker, held.holder_epoch) == (
        workflow_id,
        lease.worker,
        lease.epoch,
    )
    if not mine:
        if held.holder_workflow != workflow_id or own.left <= 0:
            return None
        if not _epoch_over(conn, held.worker, held.holder_epoch):
            return None
        conn.execute(
            projects.update()
            .where(projects.c.name == project)
            .values(holder_epoch=lease.epoch, worker=lease.worker)
        )
    if min_left is not None and own.left < min_left:
        raise LeaseShortError(f"lease of {lease.worker} ends in {own.left:.1f} s")
    return True


def _epoch_over(conn: sa.Connection | Any, worker: str | None, epoch: int | None) -> bool:
    """The holder's worker was claimed or started again since it took the unit."""
    now = conn.execute(sa.select(workers.c.epoch).where(workers.c.name == worker)).first()
    return now is None or now.epoch != epoch


def take_unit(
    store: FleetStore,
    *,
    project: str,
    incarnation: str,
    generation: int | None,
    workflow_id: str,
    lease: Lease,
) -> tuple[str | None, Project | None]:
    """Make this execution the holder of the project's unit: None, or why it must not
    run; and the project's row as that transaction read it (None if removed).

    The holder before may only be replaced when its worker's epoch ended or its
    lease ran out by the server's clock (``UnitHeldError`` otherwise: wait).
    ``generation`` None: the unit is under way (its push, its record), so a
    pause or a resume since its start does not stop it; only a removal does.
    """
    dialect = store.dialect
    now_sql = server_now(dialect)
    with store.begin() as conn:
        if not _still_valid(conn, dialect, lease):
            raise LeaseShortError(f"worker {lease.worker} holds no valid lease")
        found = conn.execute(
            sa.select(projects).where(projects.c.name == project).with_for_update()
        ).first()
        if found is None or (found.incarnation or "0") != incarnation:
            return "removed", None
        read = project_of(found._mapping)
        if generation is not None and (found.paused or found.generation != generation):
            return "paused or stopped", read
        holder = found.holder_workflow
        if holder is not None and found.worker is not None:
            mine = (holder, found.worker, found.holder_epoch) == (
                workflow_id,
                lease.worker,
                lease.epoch,
            )
            alive = conn.execute(
                sa.select(workers.c.name)
                .where(workers.c.name == found.worker)
                .where(workers.c.epoch == found.holder_epoch)
                .where(workers.c.lease_until > now_sql)
            ).first()
            if alive is not None and not mine:
                raise UnitHeldError(
                    f"the unit of {project} is held by live worker {found.worker} ({holder})"
                )
        conn.execute(
            projects.update()
            .where(projects.c.name == project)
            .values(
                holder_workflow=workflow_id,
                holder_epoch=lease.epoch,
                worker=lease.worker,
                unit_started_at=now_sql,
            )
        )
    return None, read
