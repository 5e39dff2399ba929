"""One executor of a fleet worker: a DBOS executor with a lease, ticking one unit at a time.

Started by ``tether fleet worker`` as ``python -m tether.fleet.executor NAME WORKER``
(the working folder and environment of the worker, so the same configuration).
Besides running units it keeps the fleet going: it mirrors the runs in
progress into the database, claims the executors whose lease ran out and
recovers their workflows (each claimed by exactly one rescuer), and enqueues
the first unit of a project that was added or resumed.

Exit 0 when stopped (SIGTERM, SIGINT), ``EXIT_FENCED`` when another worker
took over its units (its supervisor starts it again), 2 or 3 with one line
for what starting it again would not cure.
"""

from __future__ import annotations

import contextlib
import faulthandler
import os
import signal
import socket
import sys
import threading
from dataclasses import dataclass
from types import FrameType

from tether.core.errors import TetherError
from tether.fleet.fleet_db import FencedError, FleetDatabaseError, FleetStore, Project
from tether.fleet.keeper import Keeper
from tether.fleet.leases import (
    FleetLook,
    Lease,
    RecoveryInProgressError,
    claim_expired,
    look,
    recovered,
    register,
    release,
)
from tether.fleet.mirror import Mirror
from tether.fleet.places import Places, display
from tether.fleet.worker import Say, ensure_database, open_store

EXIT_FENCED = 75  # between an executor and its supervisor only: start me again
STOP_WAIT = 30.0


def _register(
    store: FleetStore, places: Places, name: str, group: str, stop: threading.Event, say: Say
) -> Lease | None:
    said = False
    while not stop.is_set():
        try:
            return register(
                store,
                name=name,
                group=group,
                host=socket.gethostname(),
                pid=os.getpid(),
                seconds=places.settings.dead_after,
            )
        except RecoveryInProgressError:
            if not said:
                say(f"waiting: another worker is recovering what {name} left")
                said = True
        except FleetDatabaseError:
            pass
        stop.wait(places.settings.heartbeat_interval)
    return None


def run_executor(places: Places, *, name: str, group: str, say: Say) -> int:
    from tether.fleet import launch
    from tether.fleet.workflow_context import Context

    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    for s in (signal.SIGTERM, signal.SIGINT):
        signal.signal(s, on_signal)
    if not places.is_sqlite:
        ensure_database(places.database, say, stop)
    store = open_store(places, say, stop)
    lease = None if store is None else _register(store, places, name, group, stop, say)
    if store is None or lease is None:
        return 0
    settings = places.settings
    mirror = Mirror(store, name)
    keeper = Keeper(
        store,
        lease,
        seconds=settings.dead_after,
        interval=settings.heartbeat_interval,
        homes=mirror.homes,
        say=say,
    )
    keeper.start()
    ctx = Context(
        store=store,
        lease=lease,
        state_dir=places.state_dir,
        workdir=places.workdir,
        poll_interval=settings.poll_interval,
        lease_seconds=settings.dead_after,
        mirror=mirror,
    )
    log_file = places.log_dir / f"{name}.log"
    launch.start(ctx, url=places.database, log_file=log_file)
    say(
        f"fleet worker {name} ready (epoch {lease.epoch}, {display(places.database)}; "
        f"DBOS log {log_file})"
    )
    code = _Housekeeper(store, places, lease, keeper, mirror, say).run(stop)
    # a stop: units in hand are not started, those in progress end in order (runs cancelled)
    if code == 0 and launch.stop(STOP_WAIT):
        with contextlib.suppress(FleetDatabaseError):
            release(store, lease)  # nothing left running: the others may take over now
    keeper.stop()
    say(f"fleet worker {name} {'stopped' if code == 0 else 'fenced: another worker took over'}")
    return code


@dataclass(frozen=True)
class _Housekeeper:
    """What an executor does between units: claim dead workers, recover theirs, kick projects."""

    store: FleetStore
    places: Places
    lease: Lease
    keeper: Keeper
    mirror: Mirror
    say: Say

    def run(self, stop: threading.Event) -> int:
        """Every heartbeat until ``stop``; EXIT_FENCED once another worker took over."""
        from tether.fleet import launch

        while not stop.is_set():
            if self.keeper.fenced.is_set() or launch.is_fenced():
                return EXIT_FENCED
            self.beat()
            stop.wait(self.places.settings.heartbeat_interval)
        return 0

    def beat(self) -> None:
        """One heartbeat's work: the runs' mirror, then one look at the fleet and what it asks."""
        self.mirror.sync()
        if self.keeper.lost:
            return
        try:
            seen = look(self.store)
            self._recover_the_dead(seen)
            self._kick_projects(seen.to_kick)
        except FleetDatabaseError:
            pass  # the keeper says when the database goes and comes back
        except FencedError:
            self.keeper.fenced.set()

    def _recover_the_dead(self, seen: FleetLook) -> None:
        from tether.fleet.dbos_private import recover_executor

        for dead in claim_expired(self.store, self.lease, seen):
            count = recover_executor(dead.name)
            recovered(self.store, dead.name, self.lease)
            if dead.recovery != "released":
                self.say(f"worker {dead.name} went silent; recovered {count} unit(s) of its")
            elif count:  # units it had in hand, not started, when it stopped
                self.say(f"worker {dead.name} stopped; took up {count} unit(s) it had not started")

    def _kick_projects(self, to_kick: list[Project]) -> None:
        from tether.fleet import engine

        for project in to_kick:
            if engine.kick(project):
                self.store.kicked(project.name, project.generation)


def main(argv: list[str]) -> int:
    from tether.config import load_config
    from tether.fleet.places import places as places_of

    def say(line: str) -> None:
        print(f"tether fleet: {line}", file=sys.stderr, flush=True)

    name, group = argv
    faulthandler.register(signal.SIGUSR1, all_threads=True)  # kill -USR1: where is it stuck?
    try:
        return run_executor(places_of(load_config()), name=name, group=group, say=say)
    except TetherError as exc:
        say(str(exc).strip().splitlines()[0])
        return int(exc.exit_code)


if __name__ == "__main__":
    code = main(sys.argv[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    # not sys.exit: a unit fenced in its workflow thread waits for this process to end
    os._exit(code)
