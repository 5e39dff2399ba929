"""``tether fleet worker``: a supervisor of executors, each a DBOS executor taking units.

A worker of concurrency N runs N executor processes (``tether.fleet.executor``),
each holding its own lease and ticking one unit at a time (the next one in
hand), so a worker's concurrency is its own, not a fleet-wide setting. An
executor that dies or is fenced is started again under the same name: DBOS's
launch recovers what it left (its executor id is its name). Executors die
with their supervisor: a worker killed with ``kill -9`` takes its executors
along, and their agents' guardians end the agents; the other workers take
over once the leases run out.

Nothing here imports DBOS: the supervisor stays small.
"""

from __future__ import annotations

import contextlib
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from types import FrameType

from tether.core.exit_codes import ExitCode
from tether.fleet.fleet_db import FleetDatabaseError, FleetStore
from tether.fleet.places import Places, display

Say = Callable[[str], None]
DATABASE_NAME = re.compile(r"[A-Za-z0-9_-]{1,63}")
# an executor that ran this long before ending is started again at once
STEADY_SECONDS = 30.0
STOP_WAIT = 60.0


def executor_names(name: str, concurrency: int) -> list[str]:
    return [name] if concurrency == 1 else [f"{name}.{i}" for i in range(1, concurrency + 1)]


def _spawn(name: str, group: str) -> subprocess.Popen[bytes]:
    from tether.runs.process import die_with_parent

    return subprocess.Popen(
        [sys.executable, "-m", "tether.fleet.executor", name, group],
        preexec_fn=die_with_parent,
    )


def run_worker(places: Places, *, name: str, concurrency: int, say: Say) -> int:
    """Run the worker's executors until SIGTERM/SIGINT; its exit code."""
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
    names = executor_names(name, concurrency)
    procs = {n: _spawn(n, name) for n in names}
    started = dict.fromkeys(names, time.monotonic())
    quick_exits = dict.fromkeys(names, 0)
    code = 0
    try:
        while not stop.wait(0.5):
            for n, proc in list(procs.items()):
                rc = proc.poll()
                if rc is None:
                    continue
                if rc in (ExitCode.USAGE, ExitCode.CONFIG):
                    code = rc  # it said why; starting it again would say it again
                    stop.set()
                    break
                ran = time.monotonic() - started[n]
                quick_exits[n] = 0 if ran > STEADY_SECONDS else quick_exits[n] + 1
                delay = min(30.0, 0.5 * 2 ** quick_exits[n]) if quick_exits[n] else 0.0
                say(f"executor {n} ended (exit {rc}); starting it again in {delay:.0f} s")
                if stop.wait(delay):
                    break
                procs[n] = _spawn(n, name)
                started[n] = time.monotonic()
    finally:
        _stop_all(procs)
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    return code


def _stop_all(procs: dict[str, subprocess.Popen[bytes]]) -> None:
    for proc in procs.values():
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + STOP_WAIT
    for proc in procs.values():
        try:
            proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def open_store(places: Places, say: Say, stop: threading.Event) -> FleetStore | None:
    """The fleet's store, waiting with backoff while the database cannot be reached."""
    delay = 0.5
    said = False
    while not stop.is_set():
        try:
            return FleetStore.open(places.database)
        except FleetDatabaseError as exc:
            if not said:
                say(f"fleet database {display(places.database)} unreachable ({exc}); retrying")
                said = True
            stop.wait(delay)
            delay = min(delay * 2, 10.0)
    return None


def ensure_database(url: str, say: Say, stop: threading.Event) -> None:
    """Create the PostgreSQL database of the fleet if the server does not have it yet.

    While the server cannot be reached this waits with backoff (saying so once),
    unless ``stop`` is set: then one attempt, and a ``FleetDatabaseError``.
    """
    import sqlalchemy as sa
    from sqlalchemy.exc import IntegrityError, OperationalError, ProgrammingError

    target = sa.make_url(url)
    name = target.database
    if not name:
        return
    if not DATABASE_NAME.fullmatch(name):
        raise FleetDatabaseError(f"fleet database name {name!r}: use letters, digits, _ and - only")
    admin = sa.create_engine(target.set(database="postgres"), isolation_level="AUTOCOMMIT")
    delay = 0.5
    said = False
    try:
        while True:
            try:
                with admin.connect() as conn:
                    exists = conn.execute(
                        sa.text("SELECT 1 FROM pg_database WHERE datname = :name"), {"name": name}
                    ).first()
                    if exists is None:
                        # another worker may create it a moment before this one
                        with contextlib.suppress(ProgrammingError, IntegrityError):
                            conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
                return
            except OperationalError as exc:
                first = str(exc.orig).strip().splitlines()[0]
                if stop.is_set():
                    raise FleetDatabaseError(
                        f"cannot reach the fleet database server: {first}"
                    ) from None
                if not said:
                    say(f"fleet database server unreachable ({first}); retrying")
                    said = True
                stop.wait(delay)
                delay = min(delay * 2, 10.0)
    finally:
        admin.dispose()
