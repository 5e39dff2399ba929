"""A unit's closing record: signal line, runs, loop memory and progress, in one transaction.

``record_unit`` runs inside the DBOS datasource transaction that also writes
the unit's checkpoint, so it is written exactly once, and only while the
worker writing it still holds the unit (taken over in the same transaction
when it replays a unit whose worker's epoch is over).
"""

from __future__ import annotations

import time
from dataclasses import asdict
from typing import Any

import sqlalchemy as sa

from tether.fleet.fleet_db import UnitRecord
from tether.fleet.leases import Lease, hold_for_write
from tether.fleet.mirror import forget_live
from tether.fleet.schema import projects, runs, signals


def record_unit(conn: sa.Connection | Any, dialect: str, record: UnitRecord) -> bool | None:
    """The unit's signal line, its runs, the loop's memory and the project's progress.

    Run inside the transaction that also writes the unit's DBOS checkpoint, and
    only while this worker holds the unit (``FencedError`` when its epoch is
    over: a worker that was taken over writes nothing). False: the project
    was removed. None: nothing written; the unit must first be taken with
    ``take_unit`` (``hold_for_write`` says when).
    """
    lease = Lease(record.worker, record.epoch)
    held = hold_for_write(conn, dialect, record.project, record.workflow_id, lease, None)
    if not held:
        return held
    now = time.time()
    said = [(record.seq, record.line, record.exit_code)]
    if record.closing is not None:
        said.append((record.seq + 1, *record.closing))  # the closing look, in this workflow
    conn.execute(
        signals.insert(),
        [
            {
                "project": record.project,
                "seq": seq,
                "worker": record.worker,
                "at": now,
                "line": line,
                "exit_code": code,
                "workflow_id": record.workflow_id,
            }
            for seq, line, code in said
        ],
    )
    last_line, last_exit = said[-1][1:]
    for run in record.runs:
        conn.execute(runs.delete().where(runs.c.run_id == run.run_id))
        conn.execute(runs.insert().values(**asdict(run)))
    forget_live(conn, [r.run_id for r in record.runs])
    greatest = sa.func.max if dialect == "sqlite" else sa.func.greatest
    values: dict[str, Any] = {
        "worker": None,
        "unit_started_at": None,
        "holder_workflow": None,
        "holder_epoch": None,
        "last_line": last_line,
        "last_exit": last_exit,
        "last_at": now,
        "next_seq": greatest(projects.c.next_seq, record.next_seq),
        "units_done": projects.c.units_done + (1 if record.did_work else 0),
    }
    if record.loop_state is not None:
        values["loop_state"] = record.loop_state
    if record.stop_reason is not None:
        values.update(paused=True, stopped_reason=record.stop_reason)
    conn.execute(projects.update().where(projects.c.name == record.project).values(**values))
    return True
