"""beads (github.com/steveyegge/beads): ``.beads/issues.jsonl``, one issue per line.

An issue has ``id``, ``title``, ``description``, ``status`` (open, in_progress,
blocked, deferred, closed, tombstone, pinned, hooked), ``priority`` 0-4 (0 is
the most urgent), ``issue_type``, ``created_at``/``updated_at`` (RFC 3339),
``closed_at``, ``labels`` and ``dependencies`` (``{issue_id, depends_on_id,
type, created_at}``; type ``blocks`` holds the issue back).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tether.board.board import Board
from tether.board.errors import BoardError
from tether.board.interop.common import (
    ExportResult,
    ImportResult,
    Record,
    SourceFormat,
    base_fields,
    digest,
    file_changed,
    foreign_ids,
    import_records,
    is_tether_id,
    parse_time,
)
from tether.board.states import State
from tether.board.ticket import Ticket
from tether.board.ticket_yaml import format_timestamp
from tether.fs import atomic_write_text

FMT = "beads"
_STATUS: dict[str, tuple[State, str | None]] = {
    "open": (State.ACTIONABLE, None),
    "in_progress": (State.ACTIONABLE, None),
    "hooked": (State.ACTIONABLE, None),
    "blocked": (State.ACTIONABLE, None),  # placed by its dependencies
    "deferred": (State.PARKED, "backlog"),
    "closed": (State.DONE, None),
    "pinned": (State.PARKED, "skip"),
}
_PRIORITY = {0: "P1", 1: "P1", 2: "P2", 3: "P3", 4: "P3"}
_FROM_PRIORITY = {"P1": 1, "P2": 2, "P3": 3}
_EXPORT_STATUS = {
    State.INBOX: "open",
    State.ACTIONABLE: "open",
    State.BLOCKED: "blocked",
    State.WAITING: "deferred",
    State.USER: "blocked",
    State.PARKED: "deferred",
    State.DONE: "closed",
}
# Which board folders each beads status may stand for (an export keeps the status then).
_FITS: dict[str, tuple[str, ...]] = {
    "open": ("ACTIONABLE", "BLOCKED/dependency"),
    "in_progress": ("ACTIONABLE", "BLOCKED/dependency"),
    "hooked": ("ACTIONABLE", "BLOCKED/dependency"),
    "blocked": ("BLOCKED", "USER/data"),
    "deferred": ("WAITING", "PARKED"),
    "closed": ("DONE",),
    "pinned": ("PARKED/skip",),
}


def issues_path(path: Path) -> Path:
    """``issues.jsonl`` itself, or inside a ``.beads`` folder given instead."""
    path = Path(path)
    return path / "issues.jsonl" if path.is_dir() else path


def read(path: Path) -> tuple[list[Record], list[tuple[str, str]]]:
    """The records of an ``issues.jsonl``; unreadable lines are skipped with the reason."""
    records: list[Record] = []
    skipped: list[tuple[str, str]] = []
    try:
        text = issues_path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BoardError(f"cannot read the beads file: {exc}", path=path) from None
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            skipped.append((f"line {number}", f"not JSON: {exc.msg}"))
            continue
        if not isinstance(raw, dict) or not isinstance(raw.get("id"), str) or not raw["id"]:
            skipped.append((f"line {number}", "no `id`"))
            continue
        record = _record(raw)
        if isinstance(record, str):
            skipped.append((raw["id"], record))
        else:
            records.append(record)
    return records, skipped


def _record(raw: dict[str, Any]) -> Record | str:
    source_id = raw["id"]
    title = raw.get("title")
    if not isinstance(title, str) or not title.strip():
        return "no `title`"
    status = raw.get("status") or "open"
    if status == "tombstone":
        return "deleted in beads (tombstone)"
    state, reason = _STATUS.get(status, (State.INBOX, None))
    until = None
    if status == "deferred" and (defer := parse_time(raw.get("defer_until"))) is not None:
        state, reason, until = State.WAITING, "scheduled", defer.date()
    priority = raw.get("priority", 2)
    dependencies = raw.get("dependencies") or []
    blocks_on = tuple(
        d["depends_on_id"]
        for d in dependencies
        if isinstance(d, dict)
        and d.get("type") == "blocks"
        and isinstance(d.get("depends_on_id"), str)
        and d.get("issue_id", source_id) == source_id
    )
    description = raw.get("description")
    return Record(
        source_id=source_id,
        title=title,
        body=description if isinstance(description, str) else "",
        priority=_PRIORITY.get(priority, "P2") if isinstance(priority, int) else "P2",
        state=state,
        reason=reason,
        created=parse_time(raw.get("created_at")) or datetime.now(UTC).replace(microsecond=0),
        raw=raw,
        fields={k: v for k, v in raw.items() if k not in ("id", "title", "description")},
        tether_id=is_tether_id(source_id),
        blocked=status == "blocked",
        blocks_on=blocks_on,
        until=until,
    )


def key_fields(raw: Mapping[str, Any]) -> tuple[Any, ...]:
    """What decides whether a record and a ticket say the same thing."""
    return (
        raw.get("title"),
        raw.get("description") or "",
        raw.get("status") or "open",
        raw.get("priority", 2),
    )


def import_file(board: Board, path: Path) -> ImportResult:
    records, skipped = read(path)
    source = str(issues_path(path))
    fmt = SourceFormat(FMT, lambda t: to_raw(t, {}), key_fields)
    return import_records(board, fmt, source, records, skipped)


def to_raw(ticket: Ticket, ids: Mapping[str, str], stamp: datetime | None = None) -> dict[str, Any]:
    """The beads issue for a ticket; fields kept from an import are written back."""
    base = base_fields(ticket, FMT)
    source_id = ids.get(ticket.id) or base.get("id") or ticket.id
    status = base.get("status") or "open"
    if not _fits(status, ticket):
        status = _EXPORT_STATUS[ticket.state]
    priority = base.get("priority", 2)
    if not isinstance(priority, int) or _PRIORITY.get(priority) != ticket.priority:
        priority = _FROM_PRIORITY[ticket.priority]
    mapped: dict[str, Any] = {"status": status, "priority": priority}
    if ticket.body:
        mapped["description"] = ticket.body
    if not base:
        mapped["issue_type"] = "task"
    mapped["created_at"] = base.get("created_at") or format_timestamp(ticket.created)
    if status == "closed":
        mapped["closed_at"] = base.get("closed_at") or format_timestamp(stamp or ticket.created)
    if ticket.state is State.WAITING and ticket.until is not None:
        kept = parse_time(base.get("defer_until"))
        if kept is None or kept.date() != ticket.until:
            mapped["defer_until"] = f"{ticket.until.isoformat()}T00:00:00Z"
    if isinstance(ticket.check, str) and ticket.state is State.BLOCKED:
        target = ids.get(ticket.check, ticket.check)
        deps = list(base.get("dependencies") or [])
        if not any(isinstance(d, dict) and d.get("depends_on_id") == target for d in deps):
            deps.append(
                {
                    "issue_id": source_id,
                    "depends_on_id": target,
                    "type": "blocks",
                    "created_at": format_timestamp(stamp or ticket.created),
                }
            )
        mapped["dependencies"] = deps
    raw: dict[str, Any] = {"id": source_id, "title": ticket.title}
    if "description" in mapped:
        raw["description"] = mapped.pop("description")
    for key, value in base.items():
        if key in ("id", "title", "description"):
            continue
        if key == "closed_at" and status != "closed":
            continue
        if key == "close_reason" and status != "closed":
            continue
        raw[key] = mapped.pop(key, value)
    raw.update(mapped)
    if not base or digest(raw) != ticket.front.get("origin_hash"):
        raw["updated_at"] = format_timestamp(stamp or ticket.created)
    return raw


def _same_issue(before: Any, raw: Mapping[str, Any]) -> bool:
    """The issue says what the file's line says; ``updated_at`` alone is no change (it comes
    from the ticket file's time, which a copy or a touch moves without changing a word)."""
    if not isinstance(before, dict):
        return False
    return {k: v for k, v in before.items() if k != "updated_at"} == {
        k: v for k, v in raw.items() if k != "updated_at"
    }


def _fits(status: str, ticket: Ticket) -> bool:
    places = _FITS.get(status)
    if places is None:
        return ticket.state is State.INBOX
    return ticket.location in places or ticket.state.value in places


def export_file(board: Board, path: Path) -> ExportResult:
    """Write every ticket into ``issues.jsonl``; issues not on the board are kept as they are."""
    target = issues_path(path)
    view = board.load()
    existing: list[tuple[str | None, str]] = []
    try:
        current = target.read_text(encoding="utf-8") if target.exists() else ""
    except (OSError, UnicodeDecodeError) as exc:
        raise BoardError(
            f"cannot read the beads file to merge into it: {exc}", path=target
        ) from None
    if current:
        for line in current.splitlines():
            if not line.strip():
                continue
            try:
                found = json.loads(line)
            except json.JSONDecodeError:
                found = None
            issue_id = found.get("id") if isinstance(found, dict) else None
            existing.append((issue_id if isinstance(issue_id, str) else None, line))
    ids = foreign_ids(view.tickets, FMT, lambda t: t.id)
    by_foreign = {ids[t.id]: (t, to_raw(t, ids, file_changed(t.path))) for t in view.tickets}
    result = ExportResult(target=str(target))
    lines: list[str] = []
    for issue_id, line in existing:
        entry = by_foreign.pop(issue_id, None) if issue_id is not None else None
        if entry is None:
            lines.append(line)
            continue
        ticket, raw = entry
        if _same_issue(json.loads(line), raw):
            lines.append(line)
            result.unchanged.append((ticket.id, issue_id or ""))
        else:
            lines.append(json.dumps(raw, ensure_ascii=False, separators=(",", ":")))
            result.written.append((ticket.id, raw["id"]))
    for ticket, raw in by_foreign.values():
        lines.append(json.dumps(raw, ensure_ascii=False, separators=(",", ":")))
        result.written.append((ticket.id, raw["id"]))
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(target, "".join(f"{line}\n" for line in lines))
    return result
