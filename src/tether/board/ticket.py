"""A ticket: one Markdown file with YAML front matter, in the folder of its state.

``ticket_from`` checks a parsed front matter against the rules of the folder the
file is in and raises ``TicketFormatError`` naming the key and what to write.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path, PurePosixPath
from typing import Any

from tether.board.errors import TicketFormatError
from tether.board.states import PRIORITIES, TICKET_ID, State, is_ticket_id, label

# The order keys are written in; other keys follow in the order they had.
KEY_ORDER = (
    "id",
    "title",
    "priority",
    "created",
    "blocked_by",
    "check",
    "until",
    "marker",
    "needs",
    "runs",
    "last_run",
    "report",
)


@dataclass(frozen=True)
class Ticket:
    id: str
    title: str
    priority: str
    created: datetime
    state: State
    reason: str | None
    path: Path
    body: str
    front: Mapping[str, Any]
    blocked_by: str | None = None
    check: list[str] | str | None = None
    until: date | None = None
    marker: str | None = None
    needs: str | None = None
    runs: tuple[str, ...] = ()
    report: str | None = None
    last_run: str | None = None

    @property
    def location(self) -> str:
        """``STATE`` or ``STATE/reason``."""
        return label(self.state, self.reason)

    @property
    def check_is_ticket(self) -> bool:
        """The check names a ticket that must be DONE (not a command)."""
        return isinstance(self.check, str)

    def to_json(self, *, body: bool = True) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": self.id,
            "title": self.title,
            "priority": self.priority,
            "created": self.created.isoformat().replace("+00:00", "Z"),
            "state": self.state.value,
            "reason": self.reason,
            "location": self.location,
            "path": str(self.path),
            "blocked_by": self.blocked_by,
            "check": self.check,
            "until": self.until.isoformat() if self.until else None,
            "marker": self.marker,
            "needs": self.needs,
            "runs": list(self.runs),
            "last_run": self.last_run,
            "report": self.report,
            "front": jsonable(self.front),
        }
        if body:
            data["body"] = self.body
        return data


def jsonable(value: Any) -> Any:
    """Front matter values as JSON values (dates and timestamps as ISO text)."""
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, datetime):
        return value.isoformat().replace("+00:00", "Z")
    if isinstance(value, date):
        return value.isoformat()
    return value


def ordered(front: Mapping[str, Any]) -> dict[str, Any]:
    """The front matter with the known keys first, in ``KEY_ORDER``."""
    result = {key: front[key] for key in KEY_ORDER if key in front}
    result.update((k, v) for k, v in front.items() if k not in result)
    return result


def ticket_from(path: Path, state: State, reason: str | None, front: Any, body: str) -> Ticket:
    """A checked ticket, or ``TicketFormatError`` saying which key is wrong and how."""

    def bad(message: str) -> TicketFormatError:
        return TicketFormatError(message, path=path)

    if front is None:
        front = {}
    if not isinstance(front, dict):
        raise bad("the front matter must be a YAML mapping (`key: value` lines).")
    get = front.get
    ticket_id = get("id")
    if ticket_id is None:
        raise bad(
            "missing `id` (write `id: T-YYYYMMDD-NNNNNNNNN`, or let `tether board add` do it)."
        )
    if ticket_id.__class__ is not str or TICKET_ID.fullmatch(ticket_id) is None:
        raise bad(f"`id` {ticket_id!r} is not of the form T-YYYYMMDD-NNNNNNNNN.")
    if state is not State.INBOX and path.name != ticket_id + ".md":
        raise bad(f"the file of ticket {ticket_id} must be named {ticket_id}.md.")
    title = get("title")
    if title.__class__ is not str:
        title = str(title) if isinstance(title, int | float) and not isinstance(title, bool) else ""
    title = title.strip()
    if not title:
        raise bad("missing `title` (one line of text; quote it if it has a colon).")
    priority = get("priority")
    if priority not in PRIORITIES:
        if priority is None:
            raise bad("missing `priority` (P1, P2 or P3).")
        raise bad(f"unknown priority {priority!r}; use P1, P2 or P3.")
    created = get("created")
    if created.__class__ is not datetime or created.tzinfo is not UTC:
        created = _timestamp(created, bad)
    runs = get("runs")
    if runs is None:
        runs = ()
    elif isinstance(runs, list) and all(r.__class__ is str for r in runs):
        runs = tuple(runs)
    else:
        raise bad("`runs` must be a list of run ids.")
    fields: dict[str, Any] = {
        "id": ticket_id,
        "title": title,
        "priority": priority,
        "created": created,
        "state": state,
        "reason": reason,
        "path": path,
        "body": body,
        "front": front,
        "runs": runs,
    }
    for key in _TEXT_KEYS:
        value = get(key)
        fields[key] = value if value is None or value.__class__ is str else _text(key, value, bad)
    check = get("check")
    fields["check"] = None if check is None else _check(check, bad)
    until = get("until")
    fields["until"] = until if until is None or until.__class__ is date else _date(until, bad)
    if fields["marker"] is not None:
        fields["marker"] = _marker(fields["marker"], bad)
    if state in _STATES_WITH_KEYS:
        _require_state_keys(state, reason, fields, bad)
    return build(fields)


def build(fields: dict[str, Any]) -> Ticket:
    """A ticket from its checked fields, every one given (``ticket_from``, the parse cache).

    Built without the frozen dataclass's per-field ``__setattr__`` (the cold-load hot path).
    """
    ticket = object.__new__(Ticket)
    ticket.__dict__.update(fields)
    return ticket


_STATES_WITH_KEYS = frozenset({State.BLOCKED, State.WAITING, State.USER})


def _require_state_keys(state: State, reason: str | None, fields: dict[str, Any], bad: Any) -> None:
    where = label(state, reason)
    if state is State.BLOCKED:
        if not fields["blocked_by"]:
            raise bad(f"a ticket in {where} needs `blocked_by` (what blocks it).")
        if fields["check"] is None:
            raise bad(
                f"a ticket in {where} needs `check`: a command as a list (`check: [make, test]`, "
                "exit 0 = the blocker is gone) or the id of a ticket that must be DONE."
            )
    elif state is State.WAITING:
        if fields["until"] is None and fields["marker"] is None:
            raise bad(
                f"a ticket in {where} needs `until` (a date, YYYY-MM-DD) or `marker` "
                "(a path, relative to the project root, whose existence releases it)."
            )
    elif state is State.USER and not fields["needs"]:
        raise bad(f"a ticket in {where} needs `needs` (what the user must give).")


_TEXT_KEYS = ("blocked_by", "marker", "needs", "report", "last_run")


def _text(key: str, value: Any, bad: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise bad(f"`{key}` must be text.")
    return str(value)


def _timestamp(value: Any, bad: Any) -> datetime:
    if value is None:
        raise bad("missing `created` (an ISO timestamp such as 2025-06-01T09:30:00Z).")
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            raise bad(f"`created` {value!r} is not an ISO timestamp.") from None
    if isinstance(value, datetime):
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    raise bad(f"`created` {value!r} is not an ISO timestamp.")


def _date(value: Any, bad: Any) -> date | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.astimezone(UTC).date() if value.tzinfo else value.date()
    if isinstance(value, date):
        return value
    if isinstance(value, str):
        try:
            return date.fromisoformat(value)
        except ValueError:
            pass
    raise bad(f"`until` {value!r} is not a date (YYYY-MM-DD).")


def _check(value: Any, bad: Any) -> list[str] | str | None:
    if value is None:
        return None
    if isinstance(value, str):
        if is_ticket_id(value):
            return value
        raise bad(
            f"`check` {value!r} is neither a ticket id nor a command list; write a command as a "
            "list of arguments (`check: [make, test]`); it runs without a shell."
        )
    if isinstance(value, list) and value and all(isinstance(a, str) and a for a in value):
        return list(value)
    raise bad("`check` must be a non-empty list of arguments (`[make, test]`) or a ticket id.")


def _marker(value: Any, bad: Any) -> str | None:
    if value is None:
        return None
    text = str(value)
    if not text.strip():
        raise bad("`marker` must be a path (text).")
    marker = PurePosixPath(text)
    if marker.is_absolute() or ".." in marker.parts:
        raise bad(f"`marker` {text!r} must be a path inside the project (relative, no `..`).")
    return text
