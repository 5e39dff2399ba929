"""Unfinished work from earlier runs: limit-stopped runs with a report and no follow-up yet.

A ticket's or TODO item's next run is a follow-up of its last run when that
run was stopped (by a limit, cancelled, or abandoned when its supervisor died)
and left a report. Runs started by
hand (``tether run --unit U``) in this project are followed up too when
``follow_up_manual_runs`` is on. A unit whose last ``max_attempts`` runs in a
row all ended without completing goes to the person instead of another run.

A cancelled run (Ctrl-C, a stop by a person) is no failure: it neither counts
nor breaks the count. A person who acts on a ticket starts the count again:
moving it back out of USER (tether notes the last run it gave up on, front
matter ``retry_from``) or changing its title, text or ``budget`` (tether keeps
a digest of those, ``attempt_basis``, each time it records a run).
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tether.board import Ticket
from tether.core.errors import RunNotFoundError
from tether.run_status import LIMITS, RunStatus
from tether.runs.record import RunPaths
from tether.runs.stages import StageEnd
from tether.store.runs import RunRow, get_run

if TYPE_CHECKING:
    from tether.loop.context import Loop

LIMIT_STATUSES = tuple(sorted(LIMITS))
# a run whose supervisor died (a fleet worker killed mid-run) is followed up like a limit stop
RESUMABLE = (*LIMIT_STATUSES, RunStatus.CANCELLED, RunStatus.ABANDONED)
LOOP_UNIT_PREFIXES = ("ticket:", "todo:", "routine:")


def _has_follow_up(conn: sqlite3.Connection, run_id: str) -> bool:
    row = conn.execute("SELECT 1 FROM runs WHERE follow_up_of = ? LIMIT 1", (run_id,)).fetchone()
    return row is not None


def report_of(row: RunRow) -> Path | None:
    path = RunPaths(Path(row.run_dir)).report_md
    return path if path.is_file() else None


def followable(conn: sqlite3.Connection, run_id: str | None) -> RunRow | None:
    """The run, if it stopped unfinished with a report and nothing followed it up yet."""
    if not run_id:
        return None
    try:
        row = get_run(conn, run_id)
    except RunNotFoundError:
        return None
    if row.status not in RESUMABLE or report_of(row) is None:
        return None
    if _has_follow_up(conn, row.id):
        return None
    return row


def unfinished_streak(conn: sqlite3.Connection, run_ids: Sequence[str]) -> int:
    """How many of the last runs, in a row, did not complete (cancelled ones aside)."""
    streak = 0
    for run_id in reversed(run_ids):
        try:
            row = get_run(conn, run_id)
        except RunNotFoundError:
            break
        if row.status == RunStatus.COMPLETED and not stage_failed(row):
            break
        if row.status in (RunStatus.RUNNING, RunStatus.CANCELLED):
            continue
        streak += 1
    return streak


RETRY_FROM = "retry_from"  # the run after which failures count again
ATTEMPT_BASIS = "attempt_basis"  # digest of what a person may change: title, text, budget
_TETHER_NOTE = re.compile(r"^- \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC ")


def attempt_basis(ticket: Ticket) -> str:
    """A digest of what a person shapes: title, budget and text (tether's notes aside)."""
    kept: list[str] = []
    in_note = False
    for line in ticket.body.splitlines():
        if _TETHER_NOTE.match(line):
            in_note = True
            continue
        if in_note and line.startswith("  "):
            continue
        in_note = False
        kept.append(line.rstrip())
    text = "\n".join(kept).strip()
    budget = ticket.front.get("budget")
    raw = json.dumps([ticket.title, budget, text], ensure_ascii=False, default=str)
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()[:16]


def person_changed(ticket: Ticket) -> bool:
    """The title, text or budget differ from when tether last recorded a run."""
    stored = ticket.front.get(ATTEMPT_BASIS)
    return isinstance(stored, str) and stored != attempt_basis(ticket)


PLANNED_BUDGET = "budget_at_first_run"  # the ticket's `budget` when its first run was recorded


def person_budget(ticket: Ticket) -> bool:
    """The ticket's ``budget`` was set or changed after its runs began: a person's choice.

    The loop records the budget a ticket's first run was planned with
    (``budget_at_first_run``, absent when it had none); a budget that differs from
    it was given later, by a person, and stays the person's.
    """
    budget = ticket.front.get("budget")
    if budget is None or not ticket.runs:
        return False
    return bool(budget != ticket.front.get(PLANNED_BUDGET))


def counted_runs(ticket: Ticket) -> tuple[str, ...]:
    """The ticket's runs that count toward giving up: those after a person last acted."""
    if person_changed(ticket):
        return ()
    start = ticket.front.get(RETRY_FROM)
    runs = ticket.runs
    if isinstance(start, str) and start in runs:
        return runs[runs.index(start) + 1 :]
    return runs


def ticket_streak(conn: sqlite3.Connection, ticket: Ticket) -> int:
    """Runs in a row on ``ticket`` that ended unfinished since a person last acted on it."""
    return unfinished_streak(conn, counted_runs(ticket))


def stage_failed(row: RunRow) -> bool:
    """The run completed, but one of its post-run stages (a check, a push) failed."""
    return any(StageEnd.parse(stage).status == "failed" for stage in row.stages or ())


def chain_length(conn: sqlite3.Connection, row: RunRow) -> int:
    """The run and its follow-up ancestors that ended without completing, in a row."""
    length = 0
    steps = 0
    current: RunRow | None = row
    while current is not None and current.status != RunStatus.COMPLETED and steps < 1000:
        steps += 1
        length += current.status != RunStatus.CANCELLED  # a cancellation is no failure
        previous = current.follow_up_of
        try:
            current = get_run(conn, previous) if previous else None
        except RunNotFoundError:
            current = None
    return length


def last_run_of_unit(conn: sqlite3.Connection, unit: str) -> RunRow | None:
    row = conn.execute(
        "SELECT id FROM runs WHERE unit = ? ORDER BY started_at DESC, rowid DESC LIMIT 1", (unit,)
    ).fetchone()
    return None if row is None else get_run(conn, row[0])


@dataclass(frozen=True)
class ManualFollowUp:
    run: RunRow
    chain: int


def manual_follow_ups(loop: Loop) -> tuple[ManualFollowUp | None, list[str], int]:
    """The oldest hand-started run needing a follow-up; the ones given up on; how many looked at."""
    if not loop.settings.follow_up_manual_runs:
        return None, [], 0
    placeholders = ", ".join("?" for _ in LIMIT_STATUSES)
    query = (
        f"SELECT id FROM runs r WHERE status IN ({placeholders}) AND unit IS NOT NULL "  # noqa: S608
        "AND cwd = ? AND NOT EXISTS (SELECT 1 FROM runs f WHERE f.follow_up_of = r.id) "
        "ORDER BY started_at, rowid"
    )
    cwd = str(loop.project_root.resolve())
    rows = loop.conn.execute(query, (*LIMIT_STATUSES, cwd)).fetchall()
    given_up: list[str] = []
    candidates = 0
    for (run_id,) in rows:
        row = get_run(loop.conn, run_id)
        if row.unit is None or row.unit.startswith(LOOP_UNIT_PREFIXES) or report_of(row) is None:
            continue
        candidates += 1
        chain = chain_length(loop.conn, row)
        if chain >= loop.settings.max_attempts:
            given_up.append(
                f"run {row.id} (unit {row.unit}) ended unfinished {chain} times in a row; "
                f"split the unit or give it a bigger budget, then `tether run --follow-up {row.id}`"
            )
            continue
        return ManualFollowUp(row, chain), given_up, candidates
    return None, given_up, candidates
