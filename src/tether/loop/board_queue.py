"""The board's part of level 1, in the loop's own order, read without running anything.

Level 1 (``level1.scan``) takes the board's work in this order: untriaged INBOX
entries first (and then nothing else), ACTIONABLE tickets (P1 first, then the
oldest), BLOCKED tickets whose check passes, WAITING tickets whose date or
marker has arrived. Tickets under a user lock are never taken. The ordering
rules live here and level 1, its BLOCKED and WAITING steps and the person's
bundle import them; ``board_queue`` lays the same steps out as one queue, so
that ``tether status`` and the dashboard can show what the loop would take next,
what is blocked on what, and what waits for a person, from the board alone
(no tick, no check run, nothing written).

Only the board package and the foundation are imported: ``tether status`` pays
for nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from tether.board import BoardView, State, Ticket
from tether.core.errors import TetherError
from tether.fs import resolve_inside

# Front matter key that puts a ticket under a user lock: never autonomous.
USER_LOCK = "user_lock"
LOCKABLE = (State.ACTIONABLE, State.BLOCKED, State.WAITING)


def user_lock(ticket: Ticket) -> str | None:
    """Why a person locked this ticket, or None when it is not locked."""
    value = ticket.front.get(USER_LOCK)
    if value is None or value is False or value == "":
        return None
    return value if isinstance(value, str) else "locked by a person"


def queue_order(ticket: Ticket) -> tuple[str, float, str]:
    """P1 first, then the oldest ``created``, then the id: the order of every queue."""
    return (ticket.priority, ticket.created.timestamp(), ticket.id)


def locked_tickets(view: BoardView) -> list[Ticket]:
    """Tickets the loop would otherwise work that a person locked, in queue order."""
    return sorted(
        (t for t in view.tickets if t.state in LOCKABLE and user_lock(t)), key=queue_order
    )


def in_order(view: BoardView, state: State) -> list[Ticket]:
    """A state's tickets in the order level 1 looks at them (ACTIONABLE: the board's own)."""
    if state is State.ACTIONABLE:
        return view.actionable_by_priority()
    return sorted(view.in_state(state), key=queue_order)


def arrived(project_root: Path, ticket: Ticket, today: date) -> str | None:
    """Why a WAITING (or PARKED/until-trigger) ticket's wait is over, else None."""
    if ticket.until is not None and ticket.until <= today:
        return f"its date {ticket.until.isoformat()} has come (today is {today.isoformat()})"
    if ticket.marker and (project_root / ticket.marker).exists():
        try:  # it exists; make sure a symlink does not lead outside the project
            path = resolve_inside(project_root, ticket.marker)
        except TetherError:
            return None
        if path.exists():
            return f"its marker {ticket.marker} exists"
    return None


def fired_parked(project_root: Path, view: BoardView, today: date) -> list[tuple[Ticket, str]]:
    """PARKED/until-trigger tickets whose date came or whose marker appeared, and why."""
    fired = []
    for ticket in view.in_state(State.PARKED, "until-trigger"):
        why = arrived(project_root, ticket, today)
        if why is not None:
            fired.append((ticket, why))
    return fired


def done_check(view: BoardView, ticket: Ticket) -> tuple[bool, str] | None:
    """A BLOCKED ticket's check when it names a ticket: (passes, that ticket's state).

    ``None`` for a command check: only running it tells, and a tick does that.
    """
    check = ticket.check
    if not isinstance(check, str):
        return None
    other = view.get(check)
    state = other.location if other is not None else "not on the board"
    return (other is not None and other.state is State.DONE), state


@dataclass(frozen=True)
class Entry:
    """One line of the queue: a ticket (or an untriaged INBOX file) and why it is there."""

    step: str  # intake, actionable, blocked, waiting; user, locked, parked, malformed
    why: str
    ticket: Ticket | None = None
    path: Path | None = None

    def as_dict(self) -> dict[str, Any]:
        t = self.ticket
        return {
            "step": self.step,
            "id": None if t is None else t.id,
            "title": None if t is None else t.title,
            "priority": None if t is None else t.priority,
            "location": None if t is None else t.location,
            "path": str(t.path if t is not None else self.path),
            "why": self.why,
        }


@dataclass(frozen=True)
class BoardQueue:
    ready: list[Entry]  # what level 1 would take, first first
    blocked: list[Entry]  # BLOCKED and WAITING tickets not ready, with what they wait on
    for_person: list[Entry]  # USER tickets, locked tickets, fired triggers, unreadable files


def board_queue(view: BoardView, project_root: Path, today: date) -> BoardQueue:
    """The board's steps of level 1 as one queue (no check is run; command checks wait)."""
    locked = {t.id for t in locked_tickets(view)}
    ready: list[Entry] = [Entry("intake", "untriaged: triage it", path=p) for p in view.untriaged()]
    ready += [
        Entry("actionable", "ready", ticket=t)
        for t in in_order(view, State.ACTIONABLE)
        if t.id not in locked
    ]
    blocked: list[Entry] = []
    for t in in_order(view, State.BLOCKED):
        if t.id in locked:
            continue
        on = f"blocked by {t.blocked_by}"
        verdict = done_check(view, t)
        if verdict is not None and verdict[0]:
            ready.append(Entry("blocked", f"{on}; its check ticket {t.check} is DONE", ticket=t))
        elif verdict is not None:
            blocked.append(Entry("blocked", f"{on}; waits for {t.check} ({verdict[1]})", t))
        else:
            blocked.append(Entry("blocked", f"{on}; {_command_check(t)}", ticket=t))
    for t in in_order(view, State.WAITING):
        if t.id in locked:
            continue
        why = arrived(project_root, t, today)
        if why is not None:
            ready.append(Entry("waiting", why, ticket=t))
        else:
            until = f"until {t.until.isoformat()}" if t.until else f"until {t.marker} exists"
            blocked.append(Entry("waiting", f"waits {until}", ticket=t))
    return BoardQueue(ready, blocked, _for_person(view, project_root, today))


def _command_check(ticket: Ticket) -> str:
    check = ticket.check
    shown = " ".join(check) if isinstance(check, list) else str(check)
    last = ticket.front.get("last_check")
    if isinstance(last, dict) and "at" in last:
        code = last.get("exit_code")
        result = "timed out" if last.get("timed_out") else f"exit {code}"
        return f"check `{shown}` ({result} at {last['at']}; runs again at a tick)"
    return f"check `{shown}` (runs at the next tick)"


def _for_person(view: BoardView, project_root: Path, today: date) -> list[Entry]:
    out = [Entry("user", f"needs: {t.needs}", ticket=t) for t in in_order(view, State.USER)]
    out += [
        Entry("locked", f"under a user lock ({user_lock(t)})", ticket=t)
        for t in locked_tickets(view)
    ]
    out += [
        Entry("parked", f"its trigger fired: {why}; ACTIONABLE to work it, or park it again", t)
        for t, why in fired_parked(project_root, view, today)
    ]
    out += [
        Entry("malformed", f"tether cannot read it: {message}", path=path)
        for path, message in view.malformed
    ]
    return out
