"""What the dashboard's pages show, as JSON-ready values (no web framework here).

Every function only reads: the store through a read-only connection, a run's
files, the board's ticket files.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tether.config import Config
from tether.dashboard.report_html import report_html
from tether.dashboard.runview import SERIES, Tail, Tails, downsample, file_stamp

if TYPE_CHECKING:
    from tether.store.runs import RunRow

PAGE_SIZE = 50
MAX_PAGE_SIZE = 200
CACHED_PAGES = 16  # run pages kept by their version
TICKS_SHOWN = 300
FOLLOW_UP_DEPTH = 50


def runs_page(conn: sqlite3.Connection | None, query: dict[str, str]) -> dict[str, Any]:
    """One page of the runs table: ``status``, ``stop``, ``harness``, ``unit``, ``since``,
    ``until`` filter; ``page`` (from 1) and ``size`` page."""
    from tether.status.collect import run_figures
    from tether.store.runs import RunFilter, search_runs

    page = max(1, _int(query.get("page"), 1))
    size = min(MAX_PAGE_SIZE, max(1, _int(query.get("size"), PAGE_SIZE)))
    filters = {k: query.get(k) or None for k in ("status", "harness", "unit", "since", "until")}
    if conn is None:
        return {"page": page, "size": size, "total": 0, "runs": [], "filters": filters}
    matching = RunFilter(stop_reason=query.get("stop") or None, **filters)
    rows, total = search_runs(conn, matching, limit=size, offset=(page - 1) * size)
    return {
        "page": page,
        "size": size,
        "total": total,
        "filters": {**filters, "stop": query.get("stop") or None},
        "runs": [
            {
                "id": r.id,
                "status": r.status,
                "stop_reason": r.stop_reason,
                "exit_code": r.exit_code,
                "unit": r.unit,
                "profile": r.profile,
                "harness": r.harness,
                "started_at": r.started_at,
                "ended_at": r.ended_at,
                **run_figures(r, 0.0).as_dict(),
            }
            for r in rows
        ],
    }


def _int(text: str | None, default: int) -> int:
    try:
        return int(text) if text else default
    except ValueError:
        return default


def run_page(
    conn: sqlite3.Connection,
    run_id: str,
    moment: float,
    tails: Tails,
    pages: dict[str, tuple[Any, bytes]],
) -> bytes:
    """One run as JSON: record, latest timeline, downsampled series, report, files, chain.

    The events file is parsed once and then only where it grew (``tails``); the
    answer is kept by its version in ``pages``, so asking again about a run that
    did not change costs a few ``stat`` calls.
    """
    from tether.runs.record import RunPaths
    from tether.store.runs import follow_ups_of, get_run

    row = get_run(conn, run_id)
    record = json.loads(json.dumps(row.as_dict(), default=str))
    paths = RunPaths(Path(row.run_dir))
    tail = tails.of(row)
    version = (
        record,
        None if tail is None else (tail.identity, tail.offset),
        file_stamp(paths.report_md),
        file_stamp(paths.report_json),
        follow_ups_of(conn, row.id),
    )  # not the time: a running run's page shows its elapsed time from the live status
    kept = pages.get(run_id)
    if kept is not None and kept[0] == version:
        return kept[1]
    body = json.dumps(_run_page(conn, row, record, tail, moment), separators=(",", ":")).encode()
    pages[run_id] = (version, body)
    while len(pages) > CACHED_PAGES:
        del pages[next(iter(pages))]
    return body


def _run_page(
    conn: sqlite3.Connection, row: RunRow, record: dict[str, Any], tail: Tail | None, moment: float
) -> dict[str, Any]:
    from tether.runs.record import RunPaths
    from tether.status.collect import run_figures

    paths = RunPaths(Path(row.run_dir))
    report_json = _read_json(paths.report_json)
    report_md = _read_text(paths.report_md)
    budget = run_figures(row, moment)
    series: dict[str, list[float]] = (
        tail.series if tail is not None else {"event": [], **{n: [] for n in SERIES}}
    )
    streamed = series["tokens"][-1] if series["tokens"] else 0
    if budget.tokens is None and streamed:
        # the record has none yet: what the stream counted so far
        budget = replace(budget, tokens=int(streamed))
    return {
        "run": record,
        "budget": budget.as_dict(),
        "timeline": [] if tail is None else list(tail.timeline),
        "timeline_total": 0 if tail is None else tail.timeline_total,
        "series": downsample(series),
        "report": None
        if report_md is None
        else {"markdown": report_md, "html": report_html(report_md)},
        "files_changed": None if report_json is None else report_json.get("files_changed"),
        "chain": _chain(conn, row.id, row.follow_up_of),
    }


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text("utf-8")
    except OSError:
        return None


def _read_json(path: Path) -> dict[str, Any] | None:
    text = _read_text(path)
    if text is None:
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _chain(conn: sqlite3.Connection, run_id: str, parent: str | None) -> dict[str, Any]:
    """The runs this one follows up (oldest first) and those that follow it up."""
    from tether.store.runs import follow_ups_of

    before: list[str] = []
    seen = {run_id}
    while parent is not None and parent not in seen and len(before) < FOLLOW_UP_DEPTH:
        before.insert(0, parent)
        seen.add(parent)
        found = conn.execute("SELECT follow_up_of FROM runs WHERE id = ?", (parent,)).fetchone()
        parent = None if found is None else found[0]
    return {"follows": before, "followed_by": follow_ups_of(conn, run_id)}


def loop_history(conn: sqlite3.Connection | None, board: str | None) -> dict[str, Any]:
    """Every board's recorded ticks (the newest ``TICKS_SHOWN``), with level-2 evidence."""
    if conn is None:
        return {"boards": [], "board": None, "ticks": []}
    from tether.clock import to_iso
    from tether.loop.tick_memory import recent_ticks, ticked_boards

    try:
        boards = ticked_boards(conn)
    except sqlite3.OperationalError:
        return {"boards": [], "board": None, "ticks": []}
    chosen = board if board in boards else (boards[0] if boards else None)
    ticks = [] if chosen is None else recent_ticks(conn, chosen, limit=TICKS_SHOWN)
    return {
        "boards": boards,
        "board": chosen,
        "ticks": [
            {
                "id": t.id,
                "at": to_iso(t.at),
                "signal": t.signal,
                "line": t.line,
                "exit_code": t.exit_code,
                "dry_run": t.dry_run,
                "level2": t.evidence.get("level2"),
                "dispatched": t.evidence.get("dispatched"),
                "bundle": t.evidence.get("bundle"),
            }
            for t in ticks
        ],
    }


def board_columns(config: Config) -> dict[str, Any]:
    """The project's board as one column per state, tickets without their bodies."""
    from tether.board import State
    from tether.loop.project_board import board_of

    board = board_of(config)
    if not board.root.is_dir():
        return {"root": str(board.root), "columns": [], "informal": [], "malformed": []}
    view = board.load()
    return {
        "root": str(board.root),
        "columns": [
            {
                "state": state.value,
                "tickets": [t.to_json(body=False) for t in view.in_state(state)],
            }
            for state in State
        ],
        "informal": [str(p) for p in view.informal],
        "malformed": [
            {"path": _inside(p, board.root), "error": message} for p, message in view.malformed
        ],
    }


def _inside(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def ticket(config: Config, ticket_id: str) -> dict[str, Any]:
    """One ticket with its text (by id; never by a path from the request)."""
    from tether.loop.project_board import board_of

    return board_of(config).get(ticket_id).to_json(body=True)
