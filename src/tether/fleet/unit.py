"""One unit of a fleet project: the project's clone at its branch's head, one tick, a commit.

The tick is the same code as ``tether loop tick`` (level 1, level 2, guard,
signal line), run in this worker's clone of the project with the project's
tether home on this worker. Before it, that home is brought up to date from
the fleet's database: the runs other workers recorded (with their reports),
the loop's memory of the board, and any run a dead worker left in progress
(its events), which the tick's recovery then marks ``abandoned``, reports and
follows up. After it, what the unit changed is committed (pushed by the next
step) and the loop's memory goes back to the database with the unit's record.

``run_unit`` never raises once the tick has begun: every way it ends is an
``UnitOutcome`` (a frozen record of plain values: DBOS checkpoints it as it
is). Before the tick, ``NotYetError`` says a retry may cure it (the database
or the remote could not be reached).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tether.core.exit_codes import ExitCode
from tether.fleet import git
from tether.fleet.fleet_db import FleetDatabaseError, FleetRun, FleetStore
from tether.fleet.mirror import (
    Mirror,
    adopt_orphans,
    fleet_runs,
    hydrate,
    local_run_ids,
    recorded_runs,
)

if TYPE_CHECKING:
    from tether.loop.context import Loop
    from tether.loop.tick import TickResult


class NotYetError(Exception):
    """The unit could not start for a reason a retry may cure (one-line message)."""


@dataclass(frozen=True)
class UnitSpec:
    project: str
    repo: str
    branch: str
    seq: int
    workflow_id: str
    worker: str
    state_home: Path  # the project's tether home on this worker: runs, guard, reports
    clone: Path  # this worker's clone of the project
    loop_state: str | None  # the loop's memory of the board, as the database keeps it


@dataclass(frozen=True)
class UnitOutcome:
    line: str
    exit_code: int
    stop: bool  # the signal line is a STOP: the next look comes after the poll interval
    runs: tuple[FleetRun, ...] = ()  # runs this unit started or recovered, as recorded
    did_work: bool = False  # an agent ran
    commit: str | None = None  # the unit's commit, to push
    bundle: bytes | None = None  # that commit for a worker without this clone
    loop_state: str | None = None
    failure: str | None = None  # the project stops for a person, with this reason
    skipped: str | None = None  # the unit did not run (paused, stopped, removed)
    # the closing look's signal line and exit code, when it came in this unit (see ``_ticks``)
    closing: tuple[str, int] | None = None


def _reap_leftovers(conn: sqlite3.Connection) -> None:
    """Agents of this home whose supervisor died: ended before their clone is reset."""
    from tether.runs.liveness import supervisor_alive
    from tether.runs.recovery import reap
    from tether.store.runs import running_runs

    for row in running_runs(conn):
        if not supervisor_alive(row):
            reap(row)


def prepare(
    spec: UnitSpec, store: FleetStore, conn: sqlite3.Connection
) -> tuple[str, set[str], list[str]]:
    """Clone and home ready for the tick: the head, runs known before it, runs to record.

    Runs to record besides those the tick starts: runs a dead worker left in
    progress, whether they come from the database (another machine) or are
    still ``running`` in this home (this worker, started again): the tick's
    recovery ends them as ``abandoned``.
    """
    from tether.store.runs import running_runs

    try:
        _reap_leftovers(conn)
        head = git.prepare_clone(spec.clone, spec.repo, spec.branch, kept_for=spec.workflow_id)
        recorded = recorded_runs(store, spec.project)
        hydrate(store, spec.state_home, conn, recorded.run_ids)
        before = local_run_ids(conn)
        left = [r.id for r in running_runs(conn)]
        adopted = [*left, *adopt_orphans(store, spec.state_home, conn, recorded.live)]
    except (git.TransientGitError, FleetDatabaseError) as exc:
        raise NotYetError(str(exc)) from None
    return head, before, adopted


def run_unit(
    spec: UnitSpec, store: FleetStore, mirror: Mirror, ticked_hook: Callable[[], None]
) -> UnitOutcome:
    """Tick once in the project's clone (recovering what a dead worker left), commit.

    ``ticked_hook`` is called once the tick is over (the executor's turn goes
    to its next unit then, before this one's records and commit).
    """
    from tether.store import state_db as db

    # One connection to the home's database for the whole unit: while it is open, the
    # loop's own connection is not the last one, so its close neither checkpoints the
    # WAL nor deletes it, and the unit pays for one checkpoint instead of three.
    spec.state_home.mkdir(parents=True, exist_ok=True)
    conn = db.connect(spec.state_home)
    try:
        base, before, adopted = prepare(spec, store, conn)
        try:
            ticked = _tick_in_clone(spec, mirror)
        finally:
            ticked_hook()
        started = local_run_ids(conn) - before
        runs = tuple(
            fleet_runs(
                conn,
                sorted(started | set(adopted)),
                project=spec.project,
                seq=spec.seq,
                worker=spec.worker,
                workflow_id=spec.workflow_id,
            )
        )
    finally:
        conn.close()
    did_work = bool(started - set(adopted))
    if ticked.failure is not None:
        return _failed(ticked.failure, runs, did_work)
    line, closing = ticked.line, ticked.closing
    lines = line if closing is None else f"{line}\n{closing[0]}"
    message = f"tether fleet: {spec.project} unit {spec.seq} ({spec.worker})\n\n{lines}\n"
    try:
        made = git.commit_unit(spec.clone, message, spec.workflow_id, base, agent_ran=did_work)
    except git.GitError as exc:
        failure = f"the unit's commit failed: {exc}"
        return _failed(failure, runs, did_work)
    commit, packed = made if made is not None else (None, None)
    code, stop, memory = ticked.code, ticked.stop, ticked.memory
    return UnitOutcome(line, code, stop, runs, did_work, commit, packed, memory, closing=closing)


@dataclass(frozen=True)
class _Ticked:
    """How the unit's tick ended: its signal line, or why it failed."""

    line: str = ""
    code: int = 0
    stop: bool = False
    memory: str | None = None  # the loop's memory of the board, after the tick
    closing: tuple[str, int] | None = None
    failure: str | None = None


def _tick_in_clone(spec: UnitSpec, mirror: Mirror) -> _Ticked:
    """The tick (and the closing look, see ``_ticks``) in the project's clone."""
    from tether.loop.context import open_loop
    from tether.loop.tick_memory import export_memory, import_memory

    env = dict(os.environ)
    env["TETHER_HOME"] = str(spec.state_home)
    for name in ("TETHER_SESSION_ID", "TETHER_RUN_ID"):
        env.pop(name, None)
    mirror.watch(spec.project, spec.state_home)
    try:
        loop = open_loop(spec.clone, env=env)
        try:
            if spec.loop_state:
                import_memory(loop.conn, loop.scope, spec.loop_state)
            result, last = _ticks(loop)
            closing = None if last is result else (last.line, int(last.exit_code))
            memory = export_memory(loop.conn, loop.scope)
        finally:
            loop.close()
            loop.lock_path.unlink(missing_ok=True)
    except Exception as exc:
        return _Ticked(failure=f"the unit's tick failed: {type(exc).__name__}: {_one_line(exc)}")
    finally:
        mirror.unwatch(spec.project)
    return _Ticked(result.line, int(result.exit_code), last.signal.is_stop, memory, closing)


def _ticks(loop: Loop) -> tuple[TickResult, TickResult]:
    """The unit's tick, and the closing look when it may come in the same unit.

    After a tick whose agent ran, the project's chain would need one more
    unit only to look once more and say STOP: a whole unit (the queue, the
    fetch, the records) for a tick that runs no agent. When level 1 has
    nothing left (looked at without running BLOCKED checks, and no BLOCKED
    ticket at all, so that look cannot miss a check that would pass now), the
    next tick can only end at level 2 (STOP, or CONTINUE with new tickets and
    no agent): it runs here, as the unit ``seq + 1`` of the chain. Only a
    WAITING date or a routine falling due in the milliseconds between the two
    looks could still start an agent in it, which is then recorded with the
    unit like any run.
    """
    from tether.board import State
    from tether.loop.level1 import scan
    from tether.loop.tick import tick

    result = tick(loop)
    dispatched = result.dispatched
    if (
        result.signal.is_stop
        or dispatched is None
        or dispatched.cancelled
        or dispatched.demonstration
    ):
        return result, result
    view = loop.board.load()
    if view.in_state(State.BLOCKED) or scan(loop, view, dry_run=True, run_checks=False).work:
        return result, result
    return result, tick(loop)


def _failed(failure: str, runs: tuple[FleetRun, ...], did_work: bool) -> UnitOutcome:
    code = int(ExitCode.HUMAN_STOP)
    return UnitOutcome(f"stopped: {failure}", code, True, runs, did_work, failure=failure)


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else "(no message)"
