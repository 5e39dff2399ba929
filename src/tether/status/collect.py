"""One read-only look at everything tether is doing: the object behind ``tether status``.

Read from the store (runs, loop ticks and guards, the watchdog's registry and
wakes), the gate database, the ingest queue and the room locks. Nothing is
started, written or migrated: the store is opened read-only, and a table an
older store lacks reads as empty. Each panel is a plain JSON value whose keys
are documented in docs/reference/status.md; a key a newer tether adds to a
run row shows up in ``runs`` without any change here.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from tether.config import Config
from tether.status.board import board_panel
from tether.status.panels import (
    EndedRun,
    GatePanel,
    GateSession,
    GuardLine,
    IngestPanel,
    LastTick,
    LoopLine,
    OpenRoom,
    OrchestratorLine,
    RunFigures,
    RunningRun,
    Status,
    WakeLine,
    WatchPanel,
)

if TYPE_CHECKING:
    from tether.fleet.panel import FleetPanel
    from tether.store.runs import RunRow

NEAR_BUDGET = 0.8  # a gate session this far into its call budget is shown
ENDED_SHOWN = 10
WAKES_SHOWN = 5
BUNDLE_SHOWN = 3
PANELS = ("running", "loops", "board", "watch", "gate", "ingest", "room", "ended", "fleet")

T = TypeVar("T")


@dataclass(frozen=True)
class Options:
    ended: int = ENDED_SHOWN
    survey: bool = True  # look at processes and tmux panes for subagents


def look(config: Config, *, now: float | None = None, options: Options | None = None) -> Status:
    """Every panel (raises ``StoreError`` for an unreadable store)."""
    from tether.store.state_db import connect_reader

    opts = options or Options()
    moment = time.time() if now is None else now
    conn = connect_reader(config.home)
    try:
        return Status(
            generated_at=_iso(moment),
            home=str(config.home),
            running=_tolerant(lambda: running_panel(conn, moment)),
            loops=_tolerant(lambda: loops_panel(conn, moment)),
            board=board_panel(config, moment),
            watch=watch_panel(config, conn, moment, survey=opts.survey),
            gate=gate_panel(config.home, conn),
            ingest=ingest_panel(config),
            rooms=room_panel(config.home),
            ended=_tolerant(lambda: ended_panel(conn, opts.ended)),
            fleet=fleet_panel(config, moment),
        )
    finally:
        if conn is not None:
            conn.close()


def collect(
    config: Config, *, now: float | None = None, options: Options | None = None
) -> dict[str, Any]:
    """The status object, as ``tether status --json`` prints it and the dashboard serves it."""
    return look(config, now=now, options=options).as_dict()


def fleet_panel(config: Config, moment: float) -> FleetPanel | None:
    """The fleet's workers and projects, where this home knows a fleet (else None).

    Its database engine is loaded only then, so a status without a fleet pays nothing.
    """
    from tether.fleet.places import configured

    if not configured(config):
        return None
    from tether.fleet.status import status_panel

    return status_panel(config, now=moment)


def _tolerant(read: Callable[[], list[T]]) -> list[T]:
    """A panel whose table an older store lacks reads as empty."""
    try:
        return read()
    except sqlite3.OperationalError as exc:
        if _missing(exc):
            return []
        raise


def _missing(exc: sqlite3.OperationalError) -> bool:
    return "no such table" in str(exc) or "no such column" in str(exc)


def _iso(epoch: float) -> str:
    from datetime import UTC, datetime

    from tether.clock import to_iso

    return to_iso(datetime.fromtimestamp(epoch, UTC))


def _epoch(iso: str | None) -> float | None:
    if not iso:
        return None
    from tether.clock import from_iso

    return from_iso(iso).timestamp()


def _mtime(path: Path) -> float | None:
    try:
        return path.stat().st_mtime
    except OSError:
        return None


# --- runs ---------------------------------------------------------------------


def _usage_figures(usage: dict[str, Any] | None) -> tuple[int | None, float | None]:
    if not usage:
        return None, None
    tokens = sum(
        int(usage.get(k) or 0)
        for k in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
    )
    cost = usage.get("cost_usd")
    return (tokens or None), (None if cost is None else float(cost))


def run_figures(row: RunRow, moment: float) -> RunFigures:
    """``row``'s figures; a running run's time runs to ``moment``."""
    tokens, cost = _usage_figures(row.usage)
    started = _epoch(row.started_at)
    ended = _epoch(row.ended_at)
    elapsed = None if started is None else max(0.0, (ended or moment) - started)
    return RunFigures(
        iterations=row.iterations,
        iteration_limit=row.iteration_limit,
        tool_calls=row.tool_calls,
        tool_call_limit=row.tool_call_limit,
        tokens=tokens,
        cost_usd=cost,
        elapsed_seconds=None if elapsed is None else round(elapsed, 1),
        timeout_seconds=row.timeout_seconds,
    )


def running_panel(conn: sqlite3.Connection | None, moment: float) -> list[RunningRun]:
    if conn is None:
        return []
    from tether.runs.liveness import supervisor_alive
    from tether.runs.record import RunPaths
    from tether.store.runs import running_runs

    out: list[RunningRun] = []
    for row in running_runs(conn):
        last_event = _mtime(RunPaths(Path(row.run_dir)).events)
        out.append(
            RunningRun(
                id=row.id,
                unit=row.unit,
                profile=row.profile,
                harness=row.harness,
                session_id=row.harness_session_id or row.session_id,
                figures=run_figures(row, moment),
                last_event_age_seconds=None
                if last_event is None
                else round(max(0.0, moment - last_event), 1),
                supervisor_alive=supervisor_alive(row),
                run_dir=row.run_dir,
                sandbox=row.sandbox,
            )
        )
    return out


def ended_panel(conn: sqlite3.Connection | None, limit: int) -> list[EndedRun]:
    if conn is None or limit <= 0:
        return []
    from tether.runs.record import RunPaths
    from tether.store.runs import ended_runs

    out: list[EndedRun] = []
    for row in ended_runs(conn, limit):
        report = RunPaths(Path(row.run_dir)).report_md
        out.append(
            EndedRun(
                id=row.id,
                status=row.status,
                stop_reason=row.stop_reason,
                exit_code=row.exit_code,
                unit=row.unit,
                harness=row.harness,
                ended_at=row.ended_at,
                report=str(report) if report.exists() else None,
                sandbox=row.sandbox,
            )
        )
    return out


# --- the loop -----------------------------------------------------------------


def loops_panel(conn: sqlite3.Connection | None, moment: float) -> list[LoopLine]:
    if conn is None:
        return []
    from tether.loop.tick_memory import recent_ticks, ticked_boards

    boards = ticked_boards(conn)
    if not boards:
        return []
    from tether.clock import to_iso
    from tether.loop import guard

    out: list[LoopLine] = []
    for board in boards:
        ticks = recent_ticks(conn, board, limit=1)
        last = ticks[-1] if ticks else None
        state = guard.load(conn, board)
        bundle = (last.evidence.get("bundle") if last else None) or {}
        waiting = [
            f"{t.get('location', '')} {t.get('id', '')} {t.get('title', '')}".strip()
            for t in bundle.get("tickets", [])
        ] + [str(i) for i in bundle.get("items", [])]
        out.append(
            LoopLine(
                board=board,
                last_tick=None
                if last is None
                else LastTick(
                    at=to_iso(last.at),
                    age_seconds=round(max(0.0, moment - last.at.timestamp()), 1),
                    signal=last.signal,
                    line=last.line,
                    exit_code=last.exit_code,
                    meaning=last.line.partition(" — ")[2] or None,
                    dry_run=last.dry_run,
                ),
                guard=None
                if state is None
                else GuardLine(
                    result=state.result,
                    at=to_iso(state.at),
                    unavailable=list(state.unavailable),
                    person_items=list(state.person_items),
                ),
                waiting_count=len(waiting),
                waiting_first=waiting[:BUNDLE_SHOWN],
            )
        )
    return out


# --- the watchdog -------------------------------------------------------------


def watch_panel(
    config: Config, conn: sqlite3.Connection | None, moment: float, *, survey: bool
) -> WatchPanel:
    if conn is None:
        return WatchPanel([], [], [])
    from tether.watch.registry import list_orchestrators, list_wakes

    orchestrators = _tolerant(lambda: list_orchestrators(conn))
    wakes = _tolerant(lambda: list_wakes(conn, limit=WAKES_SHOWN))
    registered = [OrchestratorLine(o.id, o.name, o.harness, "registered") for o in orchestrators]
    said = [WakeLine(w.at, w.reason, w.subagent, w.outcome, w.message) for w in reversed(wakes)]
    if survey and (orchestrators or _may_find_subagents(config, conn)):
        surveyed = _survey(config, conn, moment)
        if surveyed is not None:
            return WatchPanel(surveyed[0], surveyed[1], said)
    return WatchPanel(registered, [], said)


def _may_find_subagents(config: Config, conn: sqlite3.Connection) -> bool:
    """Whether a survey could find a subagent: a run whose supervisor or agent lives, one
    added by hand, or a tmux server to look into. Without any, its answer is known (none
    runs; a run whose processes are all gone is in the runs panel as such) and the
    survey, its imports and its look at every process are skipped."""
    from tether.config.schema import WatchSettings
    from tether.runs.guardian import group_running
    from tether.runs.liveness import supervisor_alive
    from tether.store.runs import running_runs
    from tether.watch.registry import list_extra_subagents
    from tether.watch.tmux import Tmux

    for row in _tolerant(lambda: running_runs(conn)):
        if supervisor_alive(row) or (row.agent_pgid is not None and group_running(row.agent_pgid)):
            return True
    if _tolerant(lambda: list_extra_subagents(conn)):
        return True
    return Tmux(config.section("watch", WatchSettings).tmux_socket).may_run()


def _survey(
    config: Config, conn: sqlite3.Connection, moment: float
) -> tuple[list[OrchestratorLine], list[dict[str, Any]]] | None:
    """The orchestrators as the survey finds them, and the subagents it sees; None: the
    registry's tables are missing."""
    from tether.config.schema import WatchSettings
    from tether.watch.activity import orchestrator_activity
    from tether.watch.cycle_report import subagent_dict
    from tether.watch.survey import Surveyor

    settings = config.section("watch", WatchSettings)
    surveyor = Surveyor(settings, config.home)
    try:
        try:
            look = surveyor.look(conn, moment, with_not_counted=False)
        except sqlite3.OperationalError as exc:
            if _missing(exc):
                return None
            raise
        orchestrators: list[OrchestratorLine] = []
        for view in look.orchestrators:
            orch = view.orchestrator
            if not view.alive:
                orchestrators.append(
                    OrchestratorLine(orch.id, orch.name, orch.harness, "gone", view.gone)
                )
                continue
            activity = orchestrator_activity(
                view, gate=surveyor.gate, now=moment, busy_veto_max=settings.busy_veto_max
            )
            idle = round(max(0.0, moment - activity.last), 1)
            state = "idle" if idle >= settings.idle_threshold else "active"
            orchestrators.append(
                OrchestratorLine(
                    orch.id,
                    orch.name,
                    orch.harness,
                    state,
                    idle_seconds=idle,
                    activity=activity.source,
                )
            )
        subagents = [
            {k: v for k, v in subagent_dict(s).items() if k in _SUBAGENT_KEYS}
            for s in look.subagents
        ]
        return orchestrators, subagents
    finally:
        surveyor.close()


_SUBAGENT_KEYS = ("key", "kind", "label", "state", "running", "run_id", "pane", "wait")


# --- gate, ingest, room -------------------------------------------------------


def gate_panel(home: Path, conn: sqlite3.Connection | None = None) -> GatePanel:
    """Sessions near or over their call budget; a session of a run that ended is ``ended``
    (its lock no longer matters), whatever its lock says."""
    from tether.gate import gate_db
    from tether.gate.counter import gate_db_path, sessions_near_budget

    if not gate_db_path(home).is_file():
        return GatePanel(NEAR_BUDGET, [])
    try:
        gconn = gate_db.connect_reader(os.fspath(home))
    except gate_db.GateDatabaseError as exc:
        return GatePanel(NEAR_BUDGET, [], str(exc))
    try:
        sessions = _tolerant(lambda: sessions_near_budget(gconn, ratio=NEAR_BUDGET))
    except gate_db.Error as exc:
        return GatePanel(NEAR_BUDGET, [], str(exc))
    finally:
        gconn.close()
    ended = _ended_runs(conn, [s.run_id for s in sessions if s.run_id])
    shown = [
        GateSession(
            session_id=s.session_id,
            calls_used=s.calls_used,
            call_budget=s.call_budget,
            locked=s.locked,
            over=s.over,
            state="ended"
            if s.run_id in ended
            else "locked"
            if s.locked
            else "over"
            if s.over
            else "near",
            run_id=s.run_id,
            harness=s.harness,
            updated_at=_iso(s.updated_at) if s.updated_at else None,
        )
        for s in sessions
    ]
    return GatePanel(NEAR_BUDGET, shown)


def _ended_runs(conn: sqlite3.Connection | None, run_ids: list[str]) -> set[str]:
    if conn is None or not run_ids:
        return set()
    from tether.store.runs import ended_among

    return _tolerant_set(lambda: ended_among(conn, run_ids))


def _tolerant_set(read: Callable[[], set[str]]) -> set[str]:
    try:
        return read()
    except sqlite3.OperationalError as exc:
        if _missing(exc):
            return set()
        raise


def ingest_panel(config: Config) -> IngestPanel:
    from tether.config.schema import WikiSettings

    settings = config.section("wiki", WikiSettings)
    if settings.root is None:
        return IngestPanel(None)
    from tether.core.errors import TetherError
    from tether.ingest.queue import Queue
    from tether.wiki.layout import Wiki

    root = Path(settings.root).expanduser()
    root = root if root.is_absolute() else config.project_root / root
    try:
        queue = Queue(Wiki.open(root))
        return IngestPanel(
            str(root),
            quarantine=len(queue.quarantined()),
            waiting=len(queue.waiting()),
            claimed=len(queue.claims()),
            done=len(queue.finished()),
        )
    except (OSError, TetherError) as exc:
        return IngestPanel(str(root), error=str(exc))


def room_panel(home: Path) -> list[OpenRoom]:
    """The rooms open now, from their locks."""
    from tether.room.locks import open_rooms

    rooms = []
    for holder in open_rooms(home):
        head, _, question = holder.partition(": ")
        room_id, _, pid = head.partition(", pid ")
        rooms.append(
            OpenRoom(
                room=room_id.removeprefix("room "),
                pid=int(pid) if pid.isdigit() else None,
                question=question,
            )
        )
    return rooms
