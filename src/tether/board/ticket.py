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
    ticket_id = front.get("id")
    if ticket_id is None:
        raise bad(
            "missing `id` (write `id: T-YYYYMMDD-NNNNNNNNN`, or let `tether board add` do it)."
        )
    if not isinstance(ticket_id, str) or TICKET_ID.fullmatch(ticket_id) is None:
        raise bad(f"`id` {ticket_id!r} is not of the form T-YYYYMMDD-NNNNNNNNN.")
    if state is not State.INBOX and path.name != f"{ticket_id}.md":
        raise bad(f"the file of ticket {ticket_id} must be named {ticket_id}.md.")
    title = front.get("title")
    if isinstance(title, int | float) and not isinstance(title, bool):
        title = str(title)
    if not isinstance(title, str) or not title.strip():
        raise bad("missing `title` (one line of text; quote it if it has a colon).")
    priority = front.get("priority")
    if priority not in PRIORITIES:
        if priority is None:
            raise bad("missing `priority` (P1, P2 or P3).")
        raise bad(f"unknown priority {priority!r}; use P1, P2 or P3.")
    created = _timestamp(front.get("created"), bad)
    runs = front.get("runs") or []
    if not isinstance(runs, list) or not all(isinstance(r, str) for r in runs):
        raise bad("`runs` must be a list of run ids.")
    fields: dict[str, Any] = {
        "blocked_by": _text(front, "blocked_by", bad),
        "check": _check(front.get("check"), bad),
        "until": _date(front.get("until"), bad),
        "marker": _marker(front.get("marker"), bad),
        "needs": _text(front, "needs", bad),
        "report": _text(front, "report", bad),
        "last_run": _text(front, "last_run", bad),
    }
    _require_state_keys(state, reason, fields, bad)
    return Ticket(
        id=ticket_id,
        title=title.strip(),
        priority=priority,
        created=created,
        state=state,
        reason=reason,
        path=path,
        body=body,
        front=front,
        runs=tuple(runs),
        **fields,
    )


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


def _text(front: Mapping[str, Any], key: str, bad: Any) -> str | None:
    value = front.get(key)
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
    if not isinstance(value, str) or not value.strip():
        raise bad("`marker` must be a path (text).")
    parts = PurePosixPath(value).parts
    if PurePosixPath(value).is_absolute() or ".." in parts:
        raise bad(f"`marker` {value!r} must be a path inside the project (relative, no `..`).")
    return value
