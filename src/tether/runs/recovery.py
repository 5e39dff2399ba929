"""Runs whose supervisor died: found, their leftovers reaped, their counts kept.

A run stays ``running`` in the store only while its supervisor lives. Any later
tether start looks for running rows whose supervisor is gone, ends what is left
of their agent's process group (only processes that carry the run's
``TETHER_RUN_ID``, so a reused group id is never hit), recounts the events that
reached ``events.jsonl``, marks the run ``abandoned`` and writes its report
from those events, so that it can be followed up like any stopped run.

psutil is imported only to reap an abandoned run: every ``tether run`` looks for
abandoned runs first, and almost always finds none.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from tether.runs.liveness import supervisor_alive
from tether.runs.record import RunPaths
from tether.store import state_db
from tether.store.runs import RunRow, get_run, running_runs, update_run

# The stream's parsing and counting load only when a run is recovered: every tick
# and every run look for orphaned runs, and there usually is none.
if TYPE_CHECKING:
    import psutil

    from tether.events.accounting import Ledger
    from tether.events.model import AnyEvent
    from tether.harnesses.base import Harness


def leftover_processes(row: RunRow) -> list[psutil.Process]:
    """Processes of the run's agent group that still carry its run id."""
    import psutil

    found: list[psutil.Process] = []
    if row.agent_pgid is None:
        return found
    for proc in psutil.process_iter():
        try:
            if os.getpgid(proc.pid) != row.agent_pgid:
                continue
            if proc.environ().get("TETHER_RUN_ID") == row.id:
                found.append(proc)
        except (psutil.Error, ProcessLookupError, PermissionError):
            continue
    return found


def reap(row: RunRow, grace: float = 2.0) -> int:
    import psutil

    procs = leftover_processes(row)
    for proc in procs:
        with contextlib.suppress(psutil.Error):
            proc.send_signal(signal.SIGTERM)
    _gone, alive = psutil.wait_procs(procs, timeout=grace)
    for proc in alive:
        with contextlib.suppress(psutil.Error):
            proc.kill()
    psutil.wait_procs(alive, timeout=grace)
    return len(procs)


def event_adapter(row: RunRow) -> Harness:
    """The parser of the run's stream, as the run was started (its harness and argv)."""
    from tether.harnesses import get_harness
    from tether.harnesses.base import RunSpec, bind

    return bind(get_harness(row.harness), RunSpec(prompt="", extra_args=tuple(row.argv)))


def run_events(row: RunRow) -> Iterator[AnyEvent]:
    """The events of what the run's stream recorded in ``events.jsonl``, in order."""
    from tether.events.lines import iter_lines

    events = RunPaths(Path(row.run_dir)).events
    if not events.exists():
        return
    adapter = event_adapter(row)
    with events.open("rb") as f:
        for line in iter_lines(f):
            yield from adapter.parse_line(line)


def recount(row: RunRow, env: dict[str, str] | None = None) -> Ledger:
    """The ledger of whatever the run's stream recorded before it was cut off.

    A harness whose stream has no per-step event (Codex) counts its steps from
    its own session file when that can still be found; else the stream's upper
    bound stands in (marked ``bound``), never the stream's zero.
    """
    from tether.events.accounting import Ledger, count, stream_upper_bound
    from tether.events.lines import iter_lines

    ledger = Ledger()
    count(run_events(row), ledger)
    adapter = event_adapter(row)
    if adapter.iteration_source != "session_file":
        return ledger
    path = (
        adapter.session_file(ledger.session_id, env if env is not None else dict(os.environ))
        if ledger.session_id
        else None
    )
    if path is not None and path.is_file():
        session = Ledger()
        with path.open("rb") as f:
            count((e for line in iter_lines(f) for e in adapter.parse_session_line(line)), session)
        ledger.iterations = session.iterations
        ledger.iteration_source = "session_file"
    else:
        ledger.iterations = max(ledger.iterations, stream_upper_bound(ledger))
        ledger.iteration_source = "bound"
    return ledger


def last_heard(row: RunRow) -> datetime:
    """When the run's agent last wrote to its stream or its stderr (else its start)."""
    paths = RunPaths(Path(row.run_dir))
    started = datetime.fromisoformat(row.started_at)
    times = [started]
    for path in (paths.events, paths.stderr):
        with contextlib.suppress(OSError):
            times.append(datetime.fromtimestamp(path.stat().st_mtime, UTC))
    return max(times)


def recover_abandoned(conn: sqlite3.Connection, home: Path) -> list[str]:
    """Mark every orphaned running run ``abandoned``; returns their ids."""
    recovered: list[str] = []
    for row in running_runs(conn):
        if supervisor_alive(row):
            continue
        reaped = reap(row)
        ledger = recount(row)
        # the agent's end: now when its processes were still there to end, else the
        # last the run's files heard of it (the recovery may come much later)
        ended = datetime.now(UTC) if reaped else last_heard(row)
        with state_db.transaction(conn):
            update_run(
                conn,
                row.id,
                status="abandoned",
                stop_reason=f"supervisor died; {reaped} leftover process(es) ended",
                ended_at=ended.isoformat(),
                iterations=ledger.iterations,
                tool_calls=ledger.tool_calls,
                tool_results=ledger.tool_results,
                open_tool_calls=ledger.open_tool_calls,
                harness_session_id=ledger.session_id,
            )
        from tether.runs.outcome import write_recovered_report

        write_recovered_report(get_run(conn, row.id), ledger)
        _collect_proposals(conn, get_run(conn, row.id))
        recovered.append(row.id)
    return recovered


def _collect_proposals(conn: sqlite3.Connection, row: RunRow) -> None:
    """What the run proposed before its supervisor died, collected now (checked as ever)."""
    from tether.config import load_config
    from tether.core.errors import TetherError
    from tether.outbox import RunFacts, collect

    paths = RunPaths(Path(row.run_dir))
    if row.cwd is None or not any(paths.outbox.glob("*.proposal.json")):
        return
    try:
        config = load_config(cwd=Path(row.cwd))
    except TetherError:
        return  # the project's configuration is broken now: the files wait for a later look
    facts = RunFacts(row.id, row.unit, Path(row.cwd), str(paths.report_md), None)
    collect(conn, config, paths.outbox, facts)
