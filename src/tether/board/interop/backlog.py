"""Backlog.md (github.com/MrLesk/Backlog.md): ``backlog/tasks/task-N - Title.md``.

A task file has YAML front matter (``id: task-7``, ``title``, ``status`` "To
Do" / "In Progress" / "Done" or a custom one, ``assignee`` list,
``created_date`` "YYYY-MM-DD HH:MM", ``labels``, ``dependencies`` (task ids),
optional ``priority`` high/medium/low, ``milestone``, ``parent_task_id``...) and
a Markdown body. ``backlog/completed/`` holds finished tasks, ``backlog/drafts/``
ideas not yet promoted.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tether.board import ticket_yaml
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
    origin_of,
    parse_time,
)
from tether.board.states import State, is_ticket_id
from tether.board.ticket import Ticket
from tether.fs import atomic_write_text

FMT = "backlog"
_STATUS: dict[str, tuple[State, str | None]] = {
    "to do": (State.ACTIONABLE, None),
    "in progress": (State.ACTIONABLE, None),
    "done": (State.DONE, None),
}
_PRIORITY = {"high": "P1", "medium": "P2", "low": "P3"}
_FROM_PRIORITY = {"P1": "high", "P2": "medium", "P3": "low"}
_FOLDERS = ("tasks", "drafts", "completed")
_TASK_NUMBER = re.compile(r"([A-Za-z]+)-([0-9]+)")


def norm(task_id: str) -> str:
    """Backlog.md ids match without regard to case (``task-7`` = ``TASK-7``)."""
    return task_id.strip().lower()


def task_folders(path: Path) -> list[tuple[str, Path]]:
    """(kind, folder): a ``backlog/`` folder's tasks/drafts/completed, or one tasks folder."""
    path = Path(path)
    if (path / "tasks").is_dir():
        return [(kind, path / kind) for kind in _FOLDERS if (path / kind).is_dir()]
    if path.is_dir():
        return [("tasks", path)]
    raise BoardError("not a Backlog.md folder (expected backlog/ with tasks/ in it).", path=path)


def _task_files(path: Path) -> list[tuple[str, Path]]:
    return [
        (kind, file)
        for kind, folder in task_folders(path)
        for file in sorted(folder.glob("*.md"))
        if not file.name.startswith(".")
    ]


def read(path: Path) -> tuple[list[Record], list[tuple[str, str]]]:
    records: list[Record] = []
    skipped: list[tuple[str, str]] = []
    for kind, file in _task_files(path):
        try:
            parts = ticket_yaml.split(file.read_text(encoding="utf-8"))
            front = ticket_yaml.parse(parts[0]) if parts else None
        except (OSError, UnicodeDecodeError, ticket_yaml.FrontMatterError) as exc:
            skipped.append((file.name, f"unreadable: {exc}"))
            continue
        if parts is None or not isinstance(front, dict) or not front.get("id"):
            skipped.append((file.name, "no front matter with an `id`"))
            continue
        record = _record(front, parts[1], kind)
        if isinstance(record, str):
            skipped.append((file.name, record))
        else:
            records.append(record)
    return records, skipped


def _record(front: dict[str, Any], body: str, kind: str) -> Record | str:
    title = front.get("title")
    if not isinstance(title, str) or not title.strip():
        return "no `title`"
    status = str(front.get("status") or "To Do")
    state, reason = _STATUS.get(status.lower(), (State.INBOX, None))
    if kind == "completed":
        state, reason = State.DONE, None
    elif kind == "drafts":
        state, reason = State.PARKED, "backlog"
    priority = front.get("priority")
    dependencies = front.get("dependencies") or []
    created = parse_time(front.get("created_date")) or datetime.now(UTC).replace(microsecond=0)
    return Record(
        source_id=str(front["id"]),
        title=title,
        body=body,
        priority=_PRIORITY.get(str(priority).lower(), "P2") if priority else "P2",
        state=state,
        reason=reason,
        created=created,
        raw={**front, "body": body},
        fields={k: v for k, v in front.items() if k not in ("id", "title")},
        tether_id=is_tether_id(front.get("tether_id")),
        blocks_on=tuple(str(d) for d in dependencies if isinstance(d, str | int)),
    )


def key_fields(raw: Mapping[str, Any]) -> tuple[Any, ...]:
    priority = raw.get("priority")
    return (
        raw.get("title"),
        str(raw.get("status") or "To Do").lower(),
        _PRIORITY.get(str(priority).lower(), "P2") if priority else "P2",
        raw.get("body", ""),
    )


def import_folder(board: Board, path: Path) -> ImportResult:
    records, skipped = read(path)
    fmt = SourceFormat(FMT, lambda t: {**to_front(t, {}), "body": t.body}, key_fields, norm)
    return import_records(board, fmt, str(path), records, skipped)


def to_front(
    ticket: Ticket, ids: Mapping[str, str], stamp: datetime | None = None
) -> dict[str, Any]:
    """The task front matter for a ticket; fields kept from an import are written back."""
    base = base_fields(ticket, FMT)
    status = str(base.get("status") or "To Do")
    known = _STATUS.get(status.lower())
    if ticket.state is State.DONE:
        fits = known is not None and known[0] is State.DONE
    elif ticket.state is State.INBOX:
        fits = known is None or known[0] is State.ACTIONABLE
    else:
        fits = known is not None and known[0] is not State.DONE
    if not fits:
        status = "Done" if ticket.state is State.DONE else "To Do"
    front: dict[str, Any] = {
        "id": ids.get(ticket.id) or origin_of(ticket, FMT) or ticket.id,
        "title": ticket.title,
        "status": status,
        "assignee": base.get("assignee", []),
        "created_date": base.get("created_date") or ticket.created.strftime("%Y-%m-%d %H:%M"),
        "labels": base.get("labels", []),
        "dependencies": list(base.get("dependencies", [])),
    }
    if isinstance(ticket.check, str) and ticket.state is State.BLOCKED:
        target = ids.get(ticket.check)
        if target is not None and norm(target) not in map(norm, front["dependencies"]):
            front["dependencies"].append(target)
    for key, value in base.items():
        front.setdefault(key, value)
    priority = base.get("priority")
    if (_PRIORITY.get(str(priority).lower(), "P2") if priority else "P2") != ticket.priority:
        front["priority"] = _FROM_PRIORITY[ticket.priority]
    if origin_of(ticket, FMT) is None:
        front["tether_id"] = ticket.id
    elif digest({**front, "body": ticket.body}) != ticket.front.get("origin_hash"):
        front["updated_date"] = (stamp or ticket.created).strftime("%Y-%m-%d %H:%M")
    return front


def file_name(task_id: str, title: str) -> str:
    """``task-7 - Fix-the-login.md``, with Backlog.md's replacement of unsafe characters."""
    safe = re.sub(r'[<>:"/\\|?*\x00-\x1f]', "-", title)
    safe = re.sub(r"-+", "-", re.sub(r"\s+", "-", safe)).strip("-")
    return f"{task_id} - {safe[:120]}.md"


def export_folder(board: Board, path: Path) -> ExportResult:
    """Write every ticket as a task file; task files of other tasks are left alone."""
    path = Path(path)
    existing: dict[str, Path] = {}
    exported: dict[str, str] = {}  # tether id -> the task an earlier export made of it
    numbers: list[int] = []
    prefixes: list[str] = []
    if path.exists():
        for _, file in _task_files(path):
            task_id = file.name.split(" - ", 1)[0].removesuffix(".md")
            existing[norm(task_id)] = file
            if (match := _TASK_NUMBER.fullmatch(task_id)) is not None:
                prefixes.append(match[1])
                numbers.append(int(match[2]))
            tether_id = _tether_id(file)
            if tether_id is not None:
                exported[tether_id] = task_id
    prefix = max(set(prefixes), key=prefixes.count) if prefixes else "task"
    counter = iter(range(max(numbers, default=0) + 1, 1 << 62))
    view = board.load()
    ids = foreign_ids(
        view.tickets, FMT, lambda t: exported.get(t.id) or f"{prefix}-{next(counter)}"
    )
    result = ExportResult(target=str(path))
    for ticket in view.tickets:
        front = to_front(ticket, ids, file_changed(ticket.path))
        old = existing.get(norm(front["id"]))
        folder = old.parent if old is not None else path / "tasks"
        target = folder / file_name(front["id"], ticket.title)
        if old is not None and _same(old, front, ticket.body):
            result.unchanged.append((ticket.id, front["id"]))
            continue
        folder.mkdir(parents=True, exist_ok=True)
        atomic_write_text(target, ticket_yaml.join(ticket_yaml.dump(front), ticket.body))
        if old is not None and old != target:
            old.unlink(missing_ok=True)
        result.written.append((ticket.id, front["id"]))
    return result


def _tether_id(path: Path) -> str | None:
    """The ``tether_id`` an earlier export wrote into a task file, if any."""
    try:
        parts = ticket_yaml.split(path.read_text(encoding="utf-8"))
        front = ticket_yaml.parse(parts[0]) if parts is not None else None
    except (OSError, UnicodeDecodeError, ticket_yaml.FrontMatterError):
        return None
    value = front.get("tether_id") if isinstance(front, dict) else None
    return value if is_ticket_id(value) else None


def _same(path: Path, front: Mapping[str, Any], body: str) -> bool:
    try:
        parts = ticket_yaml.split(path.read_text(encoding="utf-8"))
        return parts is not None and (ticket_yaml.parse(parts[0]), parts[1]) == (dict(front), body)
    except (OSError, UnicodeDecodeError, ticket_yaml.FrontMatterError):
        return False
