"""The fleet on DBOS: one queue partitioned by project, one durable workflow per unit.

``fleet_unit(project, generation, seq)`` checks that the project still wants
work, runs the unit as a step (``tether.fleet.unit.run_unit``), records the
outcome, and enqueues its successor: at once after CONTINUE, after the poll
interval after a STOP. Successor ids are deterministic
(``tether-fleet:PROJECT:GENERATION:SEQ``), so an enqueue that is repeated by a
recovered workflow, or by two workers starting the same project, attaches to
the existing workflow instead of making a second one.

The queue's partition concurrency is 1, fleet-wide: two units of one project
never run at the same time, whatever the number of workers.
"""

from __future__ import annotations

import socket
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dbos import DBOS, SetEnqueueOptions, SetWorkflowID

from tether.fleet.store import FleetRun, FleetStore, Worker
from tether.fleet.unit import UnitSpec, conflict_exit, run_unit

QUEUE = "tether_fleet"
WORKFLOW = "tether_fleet_unit"
APP_NAME = "tether-fleet"
# Every worker runs the same workflow code; one version lets any of them take any unit.
APP_VERSION = "tether-fleet-1"


@dataclass(frozen=True)
class Context:
    """What the workflows of this process need: set once by ``start``."""

    store: FleetStore
    worker: str
    state_dir: Path
    workdir: Path
    poll_interval: float


_context: Context | None = None


def workflow_id(project: str, generation: int, seq: int) -> str:
    return f"tether-fleet:{project}:{generation}:{seq}"


def _ctx() -> Context:
    if _context is None:
        raise RuntimeError("the fleet engine was not started in this process")
    return _context


@DBOS.step(name="tether_fleet_check")
def _still_wanted(project: str, generation: int) -> bool:
    found = _ctx().store.find_project(project)
    return found is not None and not found.paused and found.generation == generation


@DBOS.step(name="tether_fleet_work")
def _work(project: str, seq: int) -> dict[str, Any]:
    ctx = _ctx()
    found = ctx.store.project(project)
    ctx.store.unit_started(project, ctx.worker)
    spec = UnitSpec(
        project=project,
        repo=found.repo,
        branch=found.branch,
        seq=seq,
        worker=ctx.worker,
        state_home=ctx.state_dir / project,
        workdir=ctx.workdir,
    )
    outcome = run_unit(spec)
    runs = _fleet_runs(spec, [*outcome.recovered, *outcome.run_ids])
    if outcome.conflict is not None:
        ctx.store.unit_ended(
            project,
            seq=seq,
            worker=ctx.worker,
            line=f"stopped: {outcome.conflict}",
            exit_code=conflict_exit(),
            fleet_runs=runs,
            did_work=bool(outcome.run_ids),
        )
        ctx.store.stop_project(project, outcome.conflict)
    else:
        ctx.store.unit_ended(
            project,
            seq=seq,
            worker=ctx.worker,
            line=outcome.line,
            exit_code=outcome.exit_code,
            fleet_runs=runs,
            did_work=bool(outcome.run_ids),
        )
    return outcome.as_dict()


@DBOS.workflow(name=WORKFLOW)
def fleet_unit(project: str, generation: int, seq: int) -> dict[str, Any]:
    if not _still_wanted(project, generation):
        return {"skipped": "paused, stopped or removed"}
    outcome = _work(project, seq)
    if outcome["conflict"] is not None:
        return outcome
    delay = None if not outcome["stop"] else _ctx().poll_interval
    enqueue_unit(project, generation, seq + 1, delay=delay)
    return outcome


def enqueue_unit(project: str, generation: int, seq: int, *, delay: float | None = None) -> str:
    """Enqueue a project's unit (idempotent: the id is deterministic)."""
    queue = DBOS.retrieve_queue(QUEUE)
    if queue is None:
        raise RuntimeError(f"the DBOS queue {QUEUE} is not registered")
    wid = workflow_id(project, generation, seq)
    with (
        SetWorkflowID(wid),
        SetEnqueueOptions(queue_partition_key=project, delay_seconds=delay),
    ):
        queue.enqueue(fleet_unit, project, generation, seq)
    return wid


def _fleet_runs(spec: UnitSpec, run_ids: list[str]) -> list[FleetRun]:
    """The records and reports of the unit's runs, as the shared database keeps them."""
    from tether.runs.record import RunPaths
    from tether.store import db
    from tether.store.runs import get_run

    found: list[FleetRun] = []
    conn = db.connect(spec.state_home)
    try:
        for run_id in run_ids:
            row = get_run(conn, run_id)
            report = RunPaths(Path(row.run_dir)).report_md
            found.append(
                FleetRun(
                    run_id=row.id,
                    project=spec.project,
                    seq=spec.seq,
                    worker=spec.worker,
                    unit=row.unit,
                    status=row.status,
                    exit_code=row.exit_code,
                    follow_up_of=row.follow_up_of,
                    iterations=row.iterations,
                    tool_calls=row.tool_calls,
                    started_at=row.started_at,
                    ended_at=row.ended_at,
                    report=report.read_text(encoding="utf-8") if report.is_file() else None,
                )
            )
    finally:
        conn.close()
    return found


def start(
    *,
    url: str,
    store: FleetStore,
    worker: str,
    concurrency: int,
    state_dir: Path,
    workdir: Path,
    poll_interval: float,
    queue_poll: float = 0.2,
) -> None:
    """Launch DBOS in this process as the executor ``worker``, listening to the fleet queue."""
    global _context
    _context = Context(store, worker, state_dir, workdir, poll_interval)
    DBOS(
        config={
            "name": APP_NAME,
            "system_database_url": url,
            "executor_id": worker,
            "application_version": APP_VERSION,
            "log_level": "WARNING",
            "notification_listener_polling_interval_sec": 0.5,
        }
    )
    DBOS.launch()
    DBOS.register_queue(
        QUEUE,
        partition_concurrency=1,
        worker_concurrency=concurrency,
        polling_interval_sec=queue_poll,
        on_conflict="always_update",
    )


def recover(executor_ids: list[str]) -> int:
    """Re-enqueue the pending workflows of dead executors (what DBOS's admin recovery runs)."""
    if not executor_ids:
        return 0
    return len(DBOS._recover_pending_workflows(executor_ids))


def stop() -> None:
    DBOS.destroy(destroy_registry=False)


def this_worker(name: str, concurrency: int, started_at: float) -> Worker:
    import os

    return Worker(
        name=name,
        executor_id=name,
        host=socket.gethostname(),
        pid=os.getpid(),
        started_at=started_at,
        heartbeat_at=time.time(),
        concurrency=concurrency,
        recovered_by=None,
    )
