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
    user_items: list[str] = []
    view = _without_locked(view, user_items)
    user_items += _fired_parked(loop, view)
    warnings = [f"malformed: {path}: {message}" for path, message in view.malformed]
    looked = _Scan(loop, view, dry_run, run_checks, user_items)
    found = looked.first_work()
    evidence = looked.evidence
    reached = {e["source"] for e in evidence}
    evidence += [{"source": s, "reached": False} for s in SOURCES if s not in reached]
    unreadable = [
        f"fix {_shown(loop, path)}: tether cannot read it ({message}); it may hold work, "
        f"so no stop can prove there is none until it is fixed"
        for path, message in view.malformed
    ]
    return Level1(found, evidence, user_items, warnings, looked.held, unreadable)


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


class _Scan:
    """The sources in order, each a step; every step reached leaves its evidence."""

    def __init__(
        self, loop: Loop, view: BoardView, dry_run: bool, run_checks: bool, user_items: list[str]
    ) -> None:
        self.loop = loop
        self.view = view
        self.dry_run = dry_run
        self.run_checks = run_checks
        self.user_items = user_items  # things only a person can unblock, found on the way
        self.evidence: list[dict[str, Any]] = []
        self.held: list[todo.TodoItem] = []  # TODO items waiting for a person

    def first_work(self) -> Work | None:
        steps = (
            self._intake,
            self._actionable,
            self._blocked,
            self._waiting,
            self._todo,
            self._routine,
            self._follow_up,
        )
        for step in steps:
            work = step()
            if work is not None:
                return work
        return None

    def _intake(self) -> Work | None:
        """1. The intake gate: nothing after it is looked at while INBOX is untriaged."""
        untriaged = self.view.untriaged()
        inbox = self.loop.board.folder(State.INBOX)
        broken = [(p, m) for p, m in self.view.malformed if inbox in p.parents]  # any depth
        self.evidence.append(
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
        return None

    def _actionable(self) -> Work | None:
        """2. An ACTIONABLE ticket, P1 first, then the oldest."""
        actionable = self.view.actionable_by_priority()
        self.evidence.append(
            {"source": "actionable", "reached": True, "open": [t.id for t in actionable]}
        )
        if actionable:
            ticket = actionable[0]
            return Work("actionable", f"ACTIONABLE {_title(ticket)}", ticket=ticket)
        return None

    def _blocked(self) -> Work | None:
        """3. A BLOCKED ticket whose check passes now."""
        looked = (
            blockers.check_blocked(self.loop, self.view, dry_run=self.dry_run)
            if self.run_checks
            else blockers.BlockedChecks(None, None, [])
        )
        unblocked, outcome = looked.unblocked, looked.outcome
        self.evidence.append(
            {
                "source": "blocked",
                "reached": True,
                "checks": looked.evidence,
                "skipped": not self.run_checks,
            }
        )
        if unblocked is not None and outcome is not None:
            return Work(
                "blocked",
                f"BLOCKED {_title(unblocked)}: {outcome.note()}",
                ticket=unblocked,
                check=outcome,
            )
        return None

    def _waiting(self) -> Work | None:
        """4. A WAITING ticket whose date or marker arrived."""
        due, why, waiting = blockers.check_waiting(self.loop, self.view)
        self.evidence.append(
            {
                "source": "waiting",
                "reached": True,
                "waiting": waiting,
                "arrived": due.id if due else None,
            }
        )
        if due is not None:
            return Work("waiting", f"WAITING {_title(due)}: {why}", ticket=due, arrived=why)
        return None

    def _todo(self) -> Work | None:
        """5. An open TODO item (``_todo_item``)."""
        item = self._todo_item()
        if item is not None:
            return Work("todo", f"TODO {item.file}:{item.line} {item.text!r}", todo=item)
        return None

    def _routine(self) -> Work | None:
        """6. A due routine check."""
        routine, statuses = routines.due_routine(self.loop)
        self.evidence.append(
            {"source": "routine", "reached": True, "routines": [s.as_dict() for s in statuses]}
        )
        if routine is not None:
            return Work("routine", f"routine {routine.name} is due", routine=routine)
        return None

    def _follow_up(self) -> Work | None:
        """7. A limit-stopped run without a follow-up."""
        follow_up, given_up, looked_at = unfinished.manual_follow_ups(self.loop)
        self.user_items += given_up
        self.evidence.append(
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

    def _todo_item(self) -> todo.TodoItem | None:
        """The first open TODO item no person holds that the policy and the attempts allow."""
        loop, user_items = self.loop, self.user_items
        items, missing = todo.open_items(
            loop.project_root, loop.settings.todo_files, loop.settings.todo_hold_words
        )
        self.held += [i for i in items if i.held]
        chosen: todo.TodoItem | None = None
        exhausted = 0
        for item in items:
            if item.held:
                continue
            verdict = loop.holding(loop.policy.assess(item.text))
            if verdict is not None:
                user_items.append(
                    f"{item.file}:{item.line} waits for {verdict.needs()}: {item.text}"
                )
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
        self.evidence.append(
            {
                "source": "todo",
                "reached": True,
                "files": list(loop.settings.todo_files),
                "missing": missing,
                "open": len(items),
                "held": len(self.held),
                "given_up": exhausted,
                "chosen": chosen.key if chosen else None,
            }
        )
        return chosen
