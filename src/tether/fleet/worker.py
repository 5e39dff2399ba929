"""``tether fleet worker``: a DBOS executor that takes units of any project.

Besides running units, every worker keeps the fleet going: it writes its
heartbeat, recovers the workflows of workers that went silent (each dead
worker is claimed by exactly one rescuer), and enqueues the first unit of a
project that was added or resumed. A database that cannot be reached is
waited for with backoff and said once, in one line; nothing is lost, because
everything the fleet knows is in that database.
"""

from __future__ import annotations

import contextlib
import re
import signal
import threading
import time
from collections.abc import Callable
from types import FrameType

from tether.fleet.places import Places, display
from tether.fleet.store import FleetDatabaseError, FleetStore

Say = Callable[[str], None]
DATABASE_NAME = re.compile(r"[A-Za-z0-9_-]{1,63}")


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


def run_worker(places: Places, *, name: str, concurrency: int, say: Say) -> int:
    from tether.fleet import engine

    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        if places.is_sqlite is False:
            ensure_database(places.database, say, stop)
        store = open_store(places, say, stop)
        if store is None:
            return 0
        engine.start(
            url=places.database,
            store=store,
            worker=name,
            concurrency=concurrency,
            state_dir=places.state_dir,
            workdir=places.workdir,
            poll_interval=places.settings.poll_interval,
        )
        started = time.time()
        say(f"fleet worker {name} ready (concurrency {concurrency}, {display(places.database)})")
        _housekeeping(store, places, name, concurrency, started, say, stop)
        with contextlib.suppress(FleetDatabaseError):
            store.worker_left(name)
        engine.stop()
        say(f"fleet worker {name} stopped")
        return 0
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _housekeeping(
    store: FleetStore,
    places: Places,
    name: str,
    concurrency: int,
    started: float,
    say: Say,
    stop: threading.Event,
) -> None:
    from tether.fleet import engine

    settings = places.settings
    outage = False
    while not stop.is_set():
        try:
            store.heartbeat(engine.this_worker(name, concurrency, started))
            for dead in store.claim_dead(name, time.time() - settings.dead_after):
                count = engine.recover([dead.executor_id])
                say(f"worker {dead.name} went silent; recovered {count} unit(s) of its")
            for project in store.to_kick():
                engine.enqueue_unit(project.name, project.generation, project.next_seq)
                store.kicked(project.name, project.generation)
            if outage:
                say("fleet database reachable again")
                outage = False
            stop.wait(settings.heartbeat_interval)
        except FleetDatabaseError as exc:
            if not outage:
                say(f"{exc}; retrying")
                outage = True
            stop.wait(min(settings.heartbeat_interval * 2, 10.0))


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
