"""The fleet on DBOS: one queue, one durable workflow per unit, one unit per project on it.

A unit is three steps that can each run again safely:

1. ``tether_fleet_run`` (in ``fleet_unit``, the queue's workflow) clones a
   project new to this machine, waits for the executor's turn
   (``tether.fleet.turn``: the queue hands an executor two units, one ticks),
   takes the project's unit for this worker's lease, brings the project's
   clone and home up to date, ticks once, gives the turn to the unit in hand
   and commits locally. Its output (``UnitOutcome``, the commit as a bundle)
   is checkpointed. The workflow then starts
   ``fleet_unit_end`` (``<unit's id>:end``, a workflow of its own, on no
   queue) with that output, and ends: the executor may take its next unit
   from the queue while the one before is pushed and recorded, so the queue's
   poll, the next unit's fetch and its tick overlap the push and the record
   instead of following them. The agent's run stays one at a time per
   executor; the project's unit stays held (``take_unit``) until its record,
   so no other unit of the project starts before it.
2. ``tether_fleet_push`` pushes that commit, only while this worker holds
   the unit with lease left for it, and never twice (the unit's trailer is
   looked for on the remote first).
3. ``tether_fleet_record`` writes the signal line, the runs with their
   reports and the loop's memory in a DBOS datasource transaction: in the same
   database transaction as the step's checkpoint, and only while this worker
   holds the unit. A rescuer replaying a unit whose worker's epoch is over
   takes the unit over in that same transaction; only when another holder is
   in the way (a live one) does ``tether_fleet_fence`` (``take_unit``, retried
   while it waits) run before the record is tried once more.

Then ``fleet_unit_end`` enqueues the successor: at once after CONTINUE, after the poll
interval after a STOP (a unit whose step also took the closing look is
recorded as two units of the chain, ``UnitRecord.next_seq``). Workflow ids are
deterministic per project incarnation
(``tether-fleet:PROJECT:INCARNATION:GENERATION:SEQ``): an enqueue repeated by a
recovered workflow or by two workers kicking the same project attaches to the
one workflow. A unit's deduplication id is its project: the queue holds one
unit per project (enqueued, delayed or taken), so a project's units never run
at once, and DBOS hands the queue's units out oldest first, whichever project
they belong to (a partitioned queue picks among projects at random, and a
project could wait several units' length behind younger units).

Transient database and git errors are retried by DBOS with backoff; when
the retries run out, or on a permanent error, the project stops with the
reason. A worker that finds it was fenced (another took over its units)
writes nothing more: its executions wait for the process to end
(``tether.fleet.executor`` exits and its supervisor starts it again).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from dbos import DBOS, SetEnqueueOptions, SetWorkflowID
from dbos._error import DBOSMaxStepRetriesExceeded

from tether.fleet import git
from tether.fleet.fleet_db import (
    FencedError,
    FleetDatabaseError,
    Project,
    UnitRecord,
    project_of,
)
from tether.fleet.leases import (
    LeaseShortError,
    UnitHeldError,
    hold_for_write,
    take_unit,
)
from tether.fleet.schema import projects
from tether.fleet.unit import NotYetError, UnitOutcome, UnitSpec, run_unit
from tether.fleet.unit_record import record_unit
from tether.fleet.workflow_context import RETRIES, Context, RetryLaterError, context

QUEUE = "tether_fleet"
WORKFLOW = "tether_fleet_unit"
END_WORKFLOW = "tether_fleet_unit_end"
APP_NAME = "tether-fleet"
# Every worker runs the same workflow code; one version lets any of them take any unit.
APP_VERSION = "tether-fleet-8"
# units an executor's queue takes at once: one ticking, one waiting for its turn (fleet/turn.py)
UNITS_IN_HAND = 2
# the successor's enqueue waits for its unit's own workflow to end (``_enqueue_successor``):
# first a twentieth of a second, doubled up to two seconds, for at most ten minutes (after an
# outage DBOS writes that end with its own backoff, which doubles up to a minute)
SUCCESSOR_WAIT = 0.05
SUCCESSOR_WAIT_MAX = 2.0
SUCCESSOR_PATIENCE = 600.0


@dataclass(frozen=True)
class PushOutcome:
    """How a unit's push ended: one of these is set (checkpointed by DBOS as it is)."""

    pushed: str | None = None  # the unit's commit on the remote branch now
    conflict: str | None = None  # the branch moved and the commit does not rebase: stop
    failure: str | None = None  # git failed for good: stop
    gone: bool = False  # the project was removed: nothing to push


@dataclass(frozen=True)
class UnitEnd:
    """How a unit's workflow ended: its signal line, its push, or why it stopped or skipped."""

    line: str | None = None
    pushed: str | None = None
    stopped: str | None = None
    skipped: str | None = None


def workflow_id(project: str, incarnation: str, generation: int, seq: int) -> str:
    return f"{chain_prefix(project, incarnation, generation)}{seq}"


def chain_prefix(project: str, incarnation: str, generation: int) -> str:
    """What the ids of one chain's units begin with (a resume starts a new generation)."""
    return f"tether-fleet:{project}:{incarnation}:{generation}:"


def _fenced(why: str) -> None:
    """This process no longer holds its lease: write nothing more, wait for the end."""
    ctx = context()
    logging.getLogger("dbos").warning("fenced: %s", why)
    ctx.fenced.set()
    threading.Event().wait()


def _hold(
    ctx: Context, project: str, incarnation: str, generation: int, wid: str, *, starting: bool
) -> str | None:
    """Take (or take over) the project's unit for this worker; why not, if it must not run."""
    return _hold_reading(ctx, project, incarnation, generation, wid, starting=starting)[0]


def _hold_reading(
    ctx: Context, project: str, incarnation: str, generation: int, wid: str, *, starting: bool
) -> tuple[str | None, Project | None]:
    """``_hold``, and the project as the same transaction read it."""
    try:
        return take_unit(
            ctx.store,
            project=project,
            incarnation=incarnation,
            generation=generation if starting else None,
            workflow_id=wid,
            lease=ctx.lease,
        )
    except (FleetDatabaseError, LeaseShortError, UnitHeldError) as exc:
        raise RetryLaterError(str(exc)) from None


@DBOS.step(name="tether_fleet_run", **RETRIES)
def _run(project: str, incarnation: str, generation: int, seq: int) -> UnitOutcome:
    ctx = context()
    wid = DBOS.workflow_id or workflow_id(project, incarnation, generation, seq)
    _clone_ahead(ctx, project)
    with ctx.turn.held() as ticked:
        with ctx.lock:
            ctx.active.add(wid)
        try:
            why, found = _hold_reading(ctx, project, incarnation, generation, wid, starting=True)
            if why is not None or found is None:
                return UnitOutcome("", 0, True, skipped=why or "removed")
            return _run_held(ctx, _spec(ctx, found, seq, wid), ticked)
        except BaseException:  # a retry waits for its turn again: not waited for by a stop
            with ctx.lock:
                ctx.active.discard(wid)
            raise


def _clone_ahead(ctx: Context, project: str) -> None:
    """Clone a project this machine has no clone of yet before the unit waits for its turn.

    The unit may wait in hand while the executor's unit before it ticks: the
    clone, the slowest part of a project's first unit on a machine, then goes
    on beside that tick instead of before this one's. Only the clone: the unit
    is taken and its clone brought to the branch's head in its turn, as
    always. Whatever fails here is left to that turn, which clones or fetches.
    """
    folder = ctx.workdir / project
    try:
        found = None if folder.exists() else ctx.store.find_project(project)
        if found is not None:
            git.clone_once(folder, found.repo, found.branch)
    except (FleetDatabaseError, git.GitError, OSError):
        pass


def _spec(ctx: Context, found: Project, seq: int, wid: str) -> UnitSpec:
    return UnitSpec(
        project=found.name,
        repo=found.repo,
        branch=found.branch,
        seq=seq,
        workflow_id=wid,
        worker=ctx.lease.worker,
        state_home=ctx.state_dir / found.name,
        clone=ctx.workdir / found.name,
        loop_state=found.loop_state,
    )


def _run_held(ctx: Context, spec: UnitSpec, ticked: Callable[[], None]) -> UnitOutcome:
    """The unit's run step, with the executor's turn (``ticked`` gives it back)."""
    try:
        outcome = run_unit(spec, ctx.store, ctx.mirror, ticked)
    except NotYetError as exc:
        raise RetryLaterError(str(exc)) from None
    if outcome.commit is not None:
        with ctx.lock:
            ctx.made.add(outcome.commit)
    return outcome


@DBOS.step(name="tether_fleet_push", **RETRIES)
def _push(project: str, incarnation: str, wid: str, outcome: UnitOutcome) -> PushOutcome:
    return push_held_unit(context(), project, incarnation, wid, outcome)


def push_held_unit(
    ctx: Context, project: str, incarnation: str, wid: str, unit: UnitOutcome
) -> PushOutcome:
    """The unit's commit on the remote branch: ``pushed``, or ``conflict``/``failure``/``gone``.

    Fenced in the transaction that reads the project just before git runs:
    this worker must hold the unit (taken over there if the holder was a dead
    execution of this workflow; through ``take_unit`` if another holder is in
    the way) with lease left for the push's whole timeout (``FencedError``
    when another worker took it over; ``RetryLaterError`` while the lease is
    too short: wait for a renewal).
    """
    found = _project_before_push(ctx, project, incarnation, wid)
    if found is None:
        return PushOutcome(gone=True)
    timeout = ctx.push_timeout
    assert unit.commit is not None
    folder = ctx.workdir / project
    with ctx.lock:
        first_try = unit.commit in ctx.made and unit.commit not in ctx.tried
        ctx.tried.add(unit.commit)
    try:
        if not (folder / ".git").is_dir():
            git.prepare_clone(folder, found.repo, found.branch)
        made = git.UnitCommit(wid, unit.commit, unit.bundle)
        pushed = git.push_unit(folder, found.branch, made, timeout, first_try=first_try)
    except git.PushConflictError as exc:
        return PushOutcome(conflict=str(exc))
    except git.TransientGitError as exc:
        raise RetryLaterError(str(exc)) from None
    except git.GitError as exc:
        return PushOutcome(failure=f"the unit's push failed: {exc}")
    return PushOutcome(pushed=pushed)


def _project_before_push(ctx: Context, project: str, incarnation: str, wid: str) -> Project | None:
    """The project, read where the push's fence holds; None when the unit is not to be pushed."""
    for _ in range(2):
        try:
            with ctx.store.begin() as conn:
                dialect = ctx.store.dialect
                held = hold_for_write(conn, dialect, project, wid, ctx.lease, ctx.push_needs)
                if held:
                    row = conn.execute(sa.select(projects).where(projects.c.name == project))
                    return project_of(row.one()._mapping)
        except (FleetDatabaseError, LeaseShortError) as exc:
            raise RetryLaterError(str(exc)) from None
        if held is False or _hold(ctx, project, incarnation, 0, wid, starting=False) is not None:
            return None
    raise RetryLaterError(f"the unit of {project} was taken again before its push")


@DBOS.step(name="tether_fleet_fence", **RETRIES)
def _fence(project: str, incarnation: str, wid: str) -> bool:
    """Before a record that found another holder: this worker takes the unit (or waits)."""
    return _hold(context(), project, incarnation, 0, wid, starting=False) is None


def _record_body(record: UnitRecord) -> bool | None:
    ctx = context()
    assert ctx.datasource is not None
    session = ctx.datasource.sql_session()
    return record_unit(session, ctx.store.dialect, record)


def _record(record: UnitRecord) -> bool | None:
    """The record step: True written, False the project is gone, None another holder first."""
    ctx = context()
    assert ctx.datasource is not None
    isolation = "SERIALIZABLE" if ctx.store.dialect == "sqlite" else "READ COMMITTED"
    options: Any = {"name": "tether_fleet_record", "isolation_level": isolation}
    held: bool | None = ctx.datasource.run_tx_step(options, _record_body, record)
    return held


def _record_held(project: str, incarnation: str, record: UnitRecord) -> bool:
    """Record the unit; when another holder is in the way, take the unit first (a step)."""
    held = _record(record)
    if held is None:
        if not _fence(project, incarnation, record.workflow_id):
            return False
        held = _record(record)
        if held is None:
            raise RuntimeError(f"the unit of {project} was taken again before its record")
    return held


@DBOS.step(name="tether_fleet_stop", **RETRIES)
def _stop(project: str, incarnation: str, reason: str) -> None:
    try:
        context().store.stop_project(project, incarnation, reason)
    except FleetDatabaseError as exc:
        raise RetryLaterError(str(exc)) from None


@DBOS.workflow(name=WORKFLOW)
def fleet_unit(project: str, incarnation: str, generation: int, seq: int) -> UnitEnd:
    """The unit's run step; its push and record go on in ``fleet_unit_end``."""
    wid = DBOS.workflow_id or ""
    body = lambda: _unit(project, incarnation, generation, seq)  # noqa: E731
    return _guarded(project, incarnation, wid, body, counted=False)  # counted with its turn


@DBOS.workflow(name=END_WORKFLOW)
def fleet_unit_end(
    project: str, incarnation: str, generation: int, seq: int, unit_id: str, unit: UnitOutcome
) -> UnitEnd:
    """The unit ``unit_id`` after its run: push, record, the successor enqueued."""
    rest = (project, incarnation, generation, seq, unit_id, unit)
    return _guarded(project, incarnation, DBOS.workflow_id or "", lambda: _end(*rest), counted=True)


def _guarded(
    project: str, incarnation: str, wid: str, body: Callable[[], UnitEnd], *, counted: bool
) -> UnitEnd:
    """A workflow of a unit: counted while it runs; never left in ERROR (the project stops)."""
    ctx = context()
    if counted:
        with ctx.lock:
            ctx.active.add(wid)
    try:
        return body()
    except FencedError as exc:
        _fenced(str(exc))
        raise
    except DBOSMaxStepRetriesExceeded as exc:
        last = exc.errors[-1] if exc.errors else exc
        reason = f"gave up after {exc.max_retries} attempts: {last}"
        _stop(project, incarnation, reason)
        return UnitEnd(stopped=reason)
    except Exception as exc:  # never a workflow left in ERROR: the project stops, says why
        reason = f"the unit failed: {type(exc).__name__}: {str(exc).strip()[:300]}"
        _stop(project, incarnation, reason)
        return UnitEnd(stopped=reason)
    finally:
        with ctx.lock:
            ctx.active.discard(wid)


def _unit(project: str, incarnation: str, generation: int, seq: int) -> UnitEnd:
    ctx = context()
    wid = DBOS.workflow_id or ""
    unit = _run(project, incarnation, generation, seq)
    if unit.skipped is not None:
        return UnitEnd(skipped=unit.skipped)
    end = f"{wid}:end"
    with ctx.lock:
        ctx.active.update((wid, end))  # counted from now on: a stop waits for them
    try:
        with SetWorkflowID(end):
            DBOS.start_workflow(fleet_unit_end, project, incarnation, generation, seq, wid, unit)
    except BaseException:
        with ctx.lock:
            ctx.active.discard(end)
        raise
    return UnitEnd(line=unit.line)


def _end(
    project: str, incarnation: str, generation: int, seq: int, wid: str, unit: UnitOutcome
) -> UnitEnd:
    """Push, record and enqueue the successor of the unit ``wid`` (whose run gave ``unit``)."""
    ctx = context()
    push = PushOutcome()
    if unit.commit is not None and unit.failure is None:
        push = _push(project, incarnation, wid, unit)
        if push.gone:
            return UnitEnd(skipped="removed")
    stop_reason = unit.failure or push.conflict or push.failure
    record = UnitRecord(
        project=project,
        seq=seq,
        workflow_id=wid,
        worker=ctx.lease.worker,
        epoch=ctx.lease.epoch,
        line=f"stopped: {stop_reason}" if stop_reason and not unit.failure else unit.line,
        exit_code=unit.exit_code,
        did_work=unit.did_work,
        runs=unit.runs,
        loop_state=unit.loop_state,
        stop_reason=stop_reason,
        closing=None if stop_reason else unit.closing,
    )
    if not _record_held(project, incarnation, record) or stop_reason:
        return UnitEnd(line=record.line, stopped=stop_reason)
    delay = ctx.poll_interval if unit.stop else None
    if push.pushed is not None and delay is None:
        # the successor comes at once: the clone is where the remote branch was at the push
        successor = workflow_id(project, incarnation, generation, record.next_seq)
        git.keep_for(ctx.workdir / project, successor, push.pushed)
    _enqueue_successor(project, incarnation, generation, record.next_seq, wid, delay)
    return UnitEnd(line=record.closing[0] if record.closing else unit.line, pushed=push.pushed)


def enqueue_unit(
    project: str, incarnation: str, generation: int, seq: int, *, delay: float | None = None
) -> str:
    """Enqueue a project's unit; the id of the project's unit on the queue now.

    A project has one unit on the queue at a time: its deduplication id is the
    project's name, held while the unit is enqueued, delayed or taken. When
    another unit of the project holds it, nothing is enqueued and that unit's
    id comes back. The id is deterministic, so the same unit enqueued again
    (by a recovered workflow, by two executors kicking) attaches to itself.
    """
    queue = context().queue or DBOS.retrieve_queue(QUEUE)  # registered by this process: no read
    if queue is None:
        raise RuntimeError(f"the DBOS queue {QUEUE} is not registered")
    wid = workflow_id(project, incarnation, generation, seq)
    with (
        SetWorkflowID(wid),
        SetEnqueueOptions(
            deduplication_id=project,
            delay_seconds=delay,
            duplication_policy="return-existing",
        ),
    ):
        handle = queue.enqueue(fleet_unit, project, incarnation, generation, seq)
    return handle.get_workflow_id()


def _enqueue_successor(
    project: str, incarnation: str, generation: int, seq: int, unit_id: str, delay: float | None
) -> None:
    """Enqueue the unit ``unit_id``'s successor, unless a newer chain's unit holds the place.

    The unit's own workflow ends in its thread just after it starts this one:
    until DBOS has written that, the project's place on the queue is still the
    unit's, and the enqueue waits for it. Any other holder is a newer chain's
    unit (a resume, the project added again): this chain ends here.
    """
    waited, wait = 0.0, SUCCESSOR_WAIT
    while waited < SUCCESSOR_PATIENCE:
        if enqueue_unit(project, incarnation, generation, seq, delay=delay) != unit_id:
            return
        DBOS.sleep(wait)
        waited, wait = waited + wait, min(wait * 2, SUCCESSOR_WAIT_MAX)
    raise RuntimeError(f"the unit {unit_id} still held its project's place on the queue")


def kick(project: Project) -> bool:
    """Enqueue the first unit of the project's chain; whether it is on the queue now.

    An older chain's unit may hold the project's place (the chain a pause, a
    STOP or a removal ended, whose next unit waits on the queue): one that
    waits is cancelled, as it would only be skipped when it runs; one that
    runs is left to end, and the kick is tried again at the next heartbeat.
    """
    chain = chain_prefix(project.name, project.incarnation, project.generation)
    args = (project.name, project.incarnation, project.generation, project.next_seq)
    holder = enqueue_unit(*args)
    if holder.startswith(chain):
        return True
    found = DBOS.get_workflow_status(holder)
    if found is None or found.status not in ("ENQUEUED", "DELAYED"):
        return False
    DBOS.cancel_workflow(holder)
    return enqueue_unit(*args).startswith(chain)
