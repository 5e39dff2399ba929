"""Runs whose supervisor died, put back on their tickets before a tick decides.

A run is written onto its ticket (``runs``, ``last_run``, ``report``) only when
its supervisor sees it end. A supervisor that died — ``tether loop run``
killed, a fleet worker's machine lost — leaves the ticket without that record,
so the next tick would start the unit afresh instead of following it up. A
real tick therefore first lets recovery mark such runs ``abandoned`` (with a
report from their events) and records each on its ticket exactly as a limit
stop is recorded; the tick then follows it up.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from tether.board import BoardError, State
from tether.runs.recovery import recover_abandoned

if TYPE_CHECKING:
    from tether.loop.context import Loop

TICKET_PREFIX = "ticket:"


def adopt_abandoned(loop: Loop) -> list[str]:
    """Recover this home's orphaned runs; record each loop ticket's one on the ticket."""
    recovered = recover_abandoned(loop.conn, loop.config.home)
    if recovered:
        _record_on_tickets(loop, recovered)
    return recovered


def _record_on_tickets(loop: Loop, recovered: list[str]) -> None:
    # imported here: a run is rarely recovered, and every tick asks
    from tether.loop.proposals import parking_front
    from tether.outbox.proposal_store import of_run
    from tether.runs.record import RunPaths
    from tether.store.runs import get_run

    for run_id in recovered:
        row = get_run(loop.conn, run_id)
        if not (row.unit or "").startswith(TICKET_PREFIX):
            continue
        ticket_id = (row.unit or "")[len(TICKET_PREFIX) :]
        try:
            ticket = loop.board.get(ticket_id)
        except BoardError:
            continue  # not on this board (any more): nothing to record
        if run_id in ticket.runs:
            continue
        report = RunPaths(Path(row.run_dir)).report_md
        linked = f"; report: {report}" if report.is_file() else ""
        front = {
            "runs": [*ticket.runs, run_id],
            "last_run": run_id,
            "report": str(report) if report.is_file() else None,
        }
        note = (
            f"run {run_id} was abandoned: its supervisor died "
            f"({row.iterations} iterations, {row.tool_calls} tool calls recorded){linked}"
        )
        waiting = [p for p in of_run(loop.conn, run_id) if p.pending]
        if waiting:  # what it proposed waits for a person first, then it is followed up
            front.update(parking_front(waiting))
            ids = ", ".join(f"{p.id} ({p.kind})" for p in waiting)
            note += f"; it proposed {ids}: waits for a person's decision"
            loop.board.move(ticket_id, State.USER, "approval", note=note, front=front)
            continue
        loop.board.update(ticket_id, front=front, note=note)
