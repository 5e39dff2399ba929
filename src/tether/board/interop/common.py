"""The import engine both formats share: match, map dependencies, create or update.

A format reads its files into ``Record``s (already mapped to a state, a
priority, a body) and can turn a ticket back into its own raw record. The
engine matches each record to a ticket (by ``origin``, or by the tether id an
earlier export wrote into it), turns open blocking dependencies into
``BLOCKED/dependency`` with a ``check`` on the blocking ticket, and writes only
what changed.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from tether.board.board import Board, NewTicket
from tether.board.states import ALL_STATE_KEYS, State, is_ticket_id
from tether.board.ticket import Ticket


@dataclass
class Record:
    """One source item, mapped to the board."""

    source_id: str
    title: str
    body: str
    priority: str
    state: State
    reason: str | None
    created: datetime
    raw: dict[str, Any]  # the record as the source has it (for digests and key fields)
    fields: dict[str, Any]  # the source's fields tether does not map: kept as `origin_fields`
    tether_id: str | None = None  # an id a tether export wrote into the record
    blocked: bool = False  # the source says "blocked"
    blocks_on: tuple[str, ...] = ()  # source ids this record waits for
    until: date | None = None


@dataclass
class ImportResult:
    source: str
    created: list[tuple[str, str]] = field(default_factory=list)  # (source id, ticket id)
    updated: list[tuple[str, str]] = field(default_factory=list)
    unchanged: list[tuple[str, str]] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (source id or line, why)

    def to_json(self) -> dict[str, Any]:
        def pairs(items: list[tuple[str, str]], names: tuple[str, str]) -> list[dict[str, str]]:
            return [dict(zip(names, item, strict=True)) for item in items]

        ids = ("source_id", "ticket_id")
        return {
            "source": self.source,
            "created": pairs(self.created, ids),
            "updated": pairs(self.updated, ids),
            "unchanged": pairs(self.unchanged, ids),
            "skipped": pairs(self.skipped, ("source_id", "why")),
        }


@dataclass
class ExportResult:
    target: str
    written: list[tuple[str, str]] = field(default_factory=list)  # (ticket id, foreign id)
    unchanged: list[tuple[str, str]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        def pairs(items: list[tuple[str, str]]) -> list[dict[str, str]]:
            return [{"ticket_id": t, "foreign_id": f} for t, f in items]

        return {
            "target": self.target,
            "written": pairs(self.written),
            "unchanged": pairs(self.unchanged),
        }


def digest(raw: Mapping[str, Any]) -> str:
    """A short stable hash of a source record."""
    text = json.dumps(raw, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def parse_time(value: Any) -> datetime | None:
    """An ISO timestamp or date (or YAML's parsed one) as aware UTC; ``None`` if unreadable."""
    if isinstance(value, datetime):
        stamp = value
    elif isinstance(value, date):
        stamp = datetime(value.year, value.month, value.day)
    elif isinstance(value, str) and value.strip():
        try:
            stamp = datetime.fromisoformat(value.strip())
        except ValueError:
            return None
    else:
        return None
    stamp = stamp.replace(tzinfo=UTC) if stamp.tzinfo is None else stamp.astimezone(UTC)
    return stamp.replace(microsecond=0)


def origin_of(ticket: Ticket, fmt: str) -> str | None:
    """The source id of a ticket imported from ``fmt`` (``beads:bd-1`` -> ``bd-1``)."""
    origin = ticket.front.get("origin")
    if isinstance(origin, str) and origin.startswith(f"{fmt}:"):
        return origin[len(fmt) + 1 :]
    return None


def base_fields(ticket: Ticket, fmt: str) -> dict[str, Any]:
    """The source fields kept on a ticket imported from ``fmt`` (empty for others)."""
    kept = ticket.front.get("origin_fields")
    if origin_of(ticket, fmt) is None or not isinstance(kept, dict):
        return {}
    return dict(kept)


def _as_written(source_id: str) -> str:
    return source_id


@dataclass(frozen=True)
class SourceFormat:
    """What the engine needs of a format besides its records."""

    name: str  # the prefix of ``origin`` (``beads:bd-1``)
    exported_as: Callable[[Ticket], Any]  # a ticket as the format's raw record
    key_fields: Callable[[Mapping[str, Any]], Any]  # what decides "says the same thing"
    norm: Callable[[str], str] = _as_written  # how two source ids compare


def import_records(
    board: Board,
    fmt: SourceFormat,
    source: str,
    records: Iterable[Record],
    skipped: list[tuple[str, str]],
) -> ImportResult:
    """Create or update one ticket per record; see the module docstring."""
    result = ImportResult(source=source, skipped=list(skipped))
    records = list(records)
    view = board.load()
    norm = fmt.norm
    by_origin = {norm(o): t for t in view.tickets if (o := origin_of(t, fmt.name)) is not None}
    matched: dict[str, Ticket | None] = {}
    ids: dict[str, str] = {}
    for record in records:
        key = norm(record.source_id)
        ticket = by_origin.get(key)
        if ticket is None and record.tether_id is not None:
            ticket = view.get(record.tether_id)
        matched[key] = ticket
        if ticket is not None:
            ids[key] = ticket.id
        elif record.tether_id is not None and view.get(record.tether_id) is None:
            ids[key] = record.tether_id
        else:
            fresh = board.new_id(record.created)
            while fresh in ids.values():
                fresh = board.new_id(record.created)
            ids[key] = fresh
    titles = {norm(r.source_id): r.title for r in records}
    open_ids = {norm(r.source_id) for r in records if r.state is not State.DONE}
    for record in records:
        key = norm(record.source_id)
        state, reason, state_front = _placement(record, fmt, ids, titles, open_ids)
        front: dict[str, Any] = {k: None for k in ALL_STATE_KEYS}
        front.update(state_front)
        front.update(
            origin=f"{fmt.name}:{record.source_id}",
            origin_hash=digest(record.raw),
            origin_fields=record.fields,
        )
        ticket = matched[key]
        if ticket is None:
            new = NewTicket(record.title, record.priority, record.body, state, reason, front)
            board.create(new, ticket_id=ids[key], created=record.created)
            result.created.append((record.source_id, ids[key]))
        elif ticket.front.get("origin_hash") == front["origin_hash"] or fmt.key_fields(
            fmt.exported_as(ticket)
        ) == fmt.key_fields(record.raw):
            result.unchanged.append((record.source_id, ticket.id))
        else:
            front.update(title=record.title, priority=record.priority)
            board.move(ticket.id, state, reason, front=front, body=record.body)
            result.updated.append((record.source_id, ticket.id))
    return result


def _placement(
    record: Record,
    fmt: SourceFormat,
    ids: Mapping[str, str],
    titles: Mapping[str, str],
    open_ids: set[str],
) -> tuple[State, str | None, dict[str, Any]]:
    """Where a record goes once its dependencies are known, and the keys that state needs."""
    blockers = [b for b in (fmt.norm(x) for x in record.blocks_on) if b in open_ids and b in ids]
    if record.state is State.DONE or not (blockers or record.blocked):
        if record.state is State.WAITING and record.until is not None:
            return record.state, record.reason, {"until": record.until}
        return record.state, record.reason, {}
    if blockers:
        named = "; ".join(f"{fmt.name} {b} ({ids[b]}): {titles[b]}" for b in blockers)
        return State.BLOCKED, "dependency", {"blocked_by": named, "check": ids[blockers[0]]}
    if record.blocked and not record.blocks_on:
        needs = f"say what blocks it: {fmt.name} marks it blocked but names no blocking item."
        return State.USER, "data", {"needs": needs}
    return State.ACTIONABLE, None, {}  # blocked only by items that are done


def foreign_ids(
    tickets: Iterable[Ticket], fmt: str, fresh: Callable[[Ticket], str]
) -> dict[str, str]:
    """Ticket id -> id in the foreign format (its origin, or a fresh one)."""
    result: dict[str, str] = {}
    for ticket in tickets:
        result[ticket.id] = origin_of(ticket, fmt) or fresh(ticket)
    return result


def is_tether_id(value: Any) -> str | None:
    return value if is_ticket_id(value) else None


def file_changed(path: Path) -> datetime:
    """When a ticket file last changed, a move included (its inode change time)."""
    st = path.stat()
    return datetime.fromtimestamp(max(st.st_mtime, st.st_ctime), UTC).replace(microsecond=0)
