"""Level 1 of a tick: look for autonomous work, in a fixed order, and stop at the first.

(docs/reference/loop.md)

1. the intake gate: anything untriaged in INBOX (informal notes included) — then
   triage is the work, and nothing after it is even looked at;
2. ACTIONABLE tickets, P1 first, then the oldest;
3. BLOCKED tickets whose check passes now;
4. WAITING tickets whose date or marker has arrived;
5. open ``- [ ]`` items in the TODO files without an approval/decision note;
6. due routine checks;
7. limit-stopped runs with a report and no follow-up yet.

Each step leaves its evidence, so ``--json`` shows what was looked at.

A file on the board that tether cannot read (bad front matter, a misplaced
file) may hold work, so the loop cannot prove there is none while it stands:
in INBOX it stops the tick with an error; anywhere else it becomes an item of
the person's bundle ("fix …"), which keeps the tick from ending ``exhausted``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tether.board import BoardView, State, Ticket
from tether.config.loop import RoutineCheck
from tether.loop import blockers, routines, todo, unfinished
from tether.loop.blockers import CheckOutcome
from tether.loop.board_queue import fired_parked, locked_tickets, user_lock
from tether.loop.context import LoopError
from tether.run_status import RunStatus

if TYPE_CHECKING:
    from tether.loop.context import Loop

SOURCES = ("intake", "actionable", "blocked", "waiting", "todo", "routine", "follow-up")


@dataclass
class Work:
    """The one unit level 1 found."""

    source: str  # one of SOURCES
    summary: str
    triage: list[Path] = field(default_factory=list)
    ticket: Ticket | None = None
    check: CheckOutcome | None = None
    arrived: str | None = None  # why a WAITING ticket is due
    todo: todo.TodoItem | None = None
    routine: RoutineCheck | None = None
    follow_up: unfinished.ManualFollowUp | None = None

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"source": self.source, "summary": self.summary}
        if self.triage:
            data["triage"] = [str(p) for p in self.triage]
        if self.ticket is not None:
            data["ticket"] = {
                "id": self.ticket.id,
                "title": self.ticket.title,
                "location": self.ticket.location,
                "priority": self.ticket.priority,
            }
        if self.check is not None:
            data["check"] = self.check.evidence
        if self.arrived:
            data["arrived"] = self.arrived
        if self.todo is not None:
            data["todo"] = self.todo.as_dict()
        if self.routine is not None:
            data["routine"] = {"name": self.routine.name, "command": list(self.routine.command)}
        if self.follow_up is not None:
            data["follow_up_of"] = self.follow_up.run.id
        return data


@dataclass
class Level1:
    work: Work | None
    evidence: list[dict[str, Any]]
    user_items: list[str]  # things only a person can unblock, found on the way
    warnings: list[str]
    held: list[todo.TodoItem] = field(default_factory=list)  # TODO items waiting for a person
    unreadable: list[str] = field(default_factory=list)  # board files only a person can fix

    def person_items(self) -> list[str]:
        """Everything level 1 saw that waits for a person, as bundle lines."""
        held = [f"{i.file}:{i.line} waits for an approval/decision: {i.text}" for i in self.held]
        return [*self.unreadable, *held, *self.user_items]


def _title(ticket: Ticket) -> str:
    return f'{ticket.id} ({ticket.priority}) "{ticket.title}"'


def _without_locked(view: BoardView, user_items: list[str]) -> BoardView:
    locked = locked_tickets(view)
    if not locked:
        return view
    user_items += [
        f"{t.location} {_title(t)} is under a user lock ({user_lock(t)}): tether leaves it alone"
        for t in locked
    ]
    keep = {t.id for t in locked}
    return replace(view, tickets=tuple(t for t in view.tickets if t.id not in keep))


def scan(loop: Loop, view: BoardView, *, dry_run: bool, run_checks: bool = True) -> Level1:
    """Level 1 in order; ``run_checks=False`` skips BLOCKED checks (the stop hook's quick look)."""
    evidence: list[dict[str, Any]] = []
    user_items: list[str] = []
    view = _without_locked(view, user_items)
    held: list[todo.TodoItem] = []
    user_items += _fired_parked(loop, view)
    warnings = [f"malformed: {path}: {message}" for path, message in view.malformed]
    found = _scan(loop, view, dry_run, run_checks, evidence, user_items, held)
    reached = {e["source"] for e in evidence}
    evidence += [{"source": s, "reached": False} for s in SOURCES if s not in reached]
    unreadable = [
        f"fix {_shown(loop, path)}: tether cannot read it ({message}); it may hold work, "
        f"so no stop can prove there is none until it is fixed"
        for path, message in view.malformed
    ]
    return Level1(found, evidence, user_items, warnings, held, unreadable)


def _fired_parked(loop: Loop, view: BoardView) -> list[str]:
    """PARKED/until-trigger tickets whose date came or whose marker appeared: for the
    person to decide (PARKED is left only on a person's order, never worked)."""
    return [
        f"{ticket.location} {_title(ticket)}: its trigger fired ({why}); move it to "
        f"ACTIONABLE to have it worked, or park it again with a new trigger"
        for ticket, why in fired_parked(loop.project_root, view, loop.clock.now().date())
    ]


def _shown(loop: Loop, path: Path) -> str:
    """A board path as the person finds it: from the project root when it is inside."""
    try:
        return str(path.relative_to(loop.project_root))
    except ValueError:
        return str(path)


def _scan(
    loop: Loop,
    view: BoardView,
    dry_run: bool,
    run_checks: bool,
    evidence: list[dict[str, Any]],
    user_items: list[str],
    held: list[todo.TodoItem],
) -> Work | None:
    # 1. intake gate
    untriaged = view.untriaged()
    inbox = loop.board.folder(State.INBOX)
    broken = [(p, m) for p, m in view.malformed if inbox in p.parents]  # any depth
    evidence.append(
        {
            "source": "intake",
            "reached": True,
            "untriaged": [str(p) for p in untriaged],
            "malformed": [str(p) for p, _ in broken],
        }
    )
    if untriaged:
        noun = "entry" if len(untriaged) == 1 else "entries"
        return Work(
            "intake", f"INBOX has {len(untriaged)} untriaged {noun}: triage", triage=untriaged
        )
    if broken:
        listing = "; ".join(f"{p.relative_to(inbox)}: {m}" for p, m in broken)
        raise LoopError(
            f"INBOX is not triaged and cannot be triaged by tether: {listing}. Fix or move "
            f"these files by hand; no STOP may be claimed while INBOX is open."
        )
    # 2. ACTIONABLE
    actionable = view.actionable_by_priority()
    evidence.append({"source": "actionable", "reached": True, "open": [t.id for t in actionable]})
    if actionable:
        ticket = actionable[0]
        return Work("actionable", f"ACTIONABLE {_title(ticket)}", ticket=ticket)
    # 3. BLOCKED whose check passes
    unblocked, outcome, checks = (
        blockers.check_blocked(loop, view, dry_run=dry_run) if run_checks else (None, None, [])
    )
    evidence.append(
        {"source": "blocked", "reached": True, "checks": checks, "skipped": not run_checks}
    )
    if unblocked is not None and outcome is not None:
        return Work(
            "blocked",
            f"BLOCKED {_title(unblocked)}: {outcome.note()}",
            ticket=unblocked,
            check=outcome,
        )
    # 4. WAITING whose date or marker arrived
    due, why, waiting = blockers.check_waiting(loop, view)
    evidence.append(
        {
            "source": "waiting",
            "reached": True,
            "waiting": waiting,
            "arrived": due.id if due else None,
        }
    )
    if due is not None:
        return Work("waiting", f"WAITING {_title(due)}: {why}", ticket=due, arrived=why)
    # 5. TODO items
    item = _todo(loop, evidence, user_items, held)
    if item is not None:
        return Work("todo", f"TODO {item.file}:{item.line} {item.text!r}", todo=item)
    # 6. routine checks
    routine, statuses = routines.due_routine(loop)
    evidence.append(
        {"source": "routine", "reached": True, "routines": [s.as_dict() for s in statuses]}
    )
    if routine is not None:
        return Work("routine", f"routine {routine.name} is due", routine=routine)
    # 7. limit-stopped runs without a follow-up
    follow_up, given_up, looked_at = unfinished.manual_follow_ups(loop)
    user_items += given_up
    evidence.append(
        {
            "source": "follow-up",
            "reached": True,
            "candidates": looked_at,
            "run": follow_up.run.id if follow_up else None,
        }
    )
    if follow_up is not None:
        run = follow_up.run
        return Work(
            "follow-up",
            f"run {run.id} (unit {run.unit}) stopped at {run.status} with a report: follow up",
            follow_up=follow_up,
        )
    return None


def _todo(
    loop: Loop,
    evidence: list[dict[str, Any]],
    user_items: list[str],
    held: list[todo.TodoItem],
) -> todo.TodoItem | None:
    items, missing = todo.open_items(
        loop.project_root, loop.settings.todo_files, loop.settings.todo_hold_words
    )
    held += [i for i in items if i.held]
    chosen: todo.TodoItem | None = None
    exhausted = 0
    for item in items:
        if item.held:
            continue
        verdict = loop.holding(loop.policy.assess(item.text))
        if verdict is not None:
            user_items.append(f"{item.file}:{item.line} waits for {verdict.needs()}: {item.text}")
            continue
        last = unfinished.last_run_of_unit(loop.conn, item.key)
        if last is not None and last.status != RunStatus.COMPLETED:
            streak = unfinished.chain_length(loop.conn, last)
            if streak >= loop.settings.max_attempts:
                exhausted += 1
                user_items.append(
                    f"{item.file}:{item.line} ended unfinished {streak} runs in a row "
                    f"(last {last.id}): split it or give it a bigger budget: {item.text}"
                )
                continue
        chosen = item
        break
    evidence.append(
        {
            "source": "todo",
            "reached": True,
            "files": list(loop.settings.todo_files),
            "missing": missing,
            "open": len(items),
            "held": len(held),
            "given_up": exhausted,
            "chosen": chosen.key if chosen else None,
        }
    )
    return chosen
