"""Reading the gate's event log (for the watchdog and reports).

Every hook event and tick the gate sees is one row of ``events`` in
``gate.db``, with its time. The watchdog reads activity (tool calls, batches),
permission prompts (``PermissionRequest``, ``Notification`` with its
``notification_type``) and ends (``Stop``, ``SessionEnd``) from here. Tool calls
and permission requests keep the tool's input as JSON cut to 2048 characters
(``tool_input``); events keep the payload's ``cwd`` and ``transcript_path``.
"""

from __future__ import annotations

import os

from tether.gate import db

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

COLUMNS = (
    "id",
    "at",
    "session_id",
    "context_key",
    "id_source",
    "harness",
    "event",
    "tool_name",
    "tool_use_id",
    "decision",
    "calls_used",
    "notification_type",
    "message",
    "tool_input",
    "cwd",
    "transcript_path",
)


def read_events(
    home: Path | str,
    *,
    session_id: str | None = None,
    since: float | None = None,
    after_id: int | None = None,
    limit: int | None = None,
) -> list[dict[str, Any]]:
    """Events in the order they were recorded, optionally of one session.

    ``since`` (Unix time) and ``after_id`` (the last ``id`` already read) both
    narrow the result, so a poller can read only what is new.
    """
    where: list[str] = []
    params: list[str | float | int] = []
    if session_id is not None:
        where.append("session_id = ?")
        params.append(session_id)
    if since is not None:
        where.append("at >= ?")
        params.append(since)
    if after_id is not None:
        where.append("id > ?")
        params.append(after_id)
    sql = f"SELECT {', '.join(COLUMNS)} FROM events"  # noqa: S608 - constant columns
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += " ORDER BY id"
    if limit is not None:
        sql += " LIMIT ?"
        params.append(limit)
    conn = db.connect(os.fspath(home))
    try:
        rows = conn.execute(sql, params).fetchall()
    finally:
        conn.close()
    return [dict(zip(COLUMNS, row, strict=True)) for row in rows]
