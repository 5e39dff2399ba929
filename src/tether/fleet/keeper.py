"""A worker's lease, kept: renewed every heartbeat, and its agents stopped before it runs out.

The renewer asks the database to extend the lease (server clock). The
watchdog measures, on this machine's monotonic clock, the time since the last
renewal was *sent*: the server extended the lease after that moment, so once
``dead_after - margin`` has passed the lease may be about to run out and this
worker's agents are stopped (every run of this process ends as cancelled, and
their process groups are killed). Nobody can take this worker's units before
its lease has run out by the server's clock, so nobody starts an agent of one
of its projects before its own agent is gone. A renewal that succeeds again
lets runs go on; a renewal refused (another worker took over) fences the
worker for good: it writes nothing more and ends.

Database outages are said once when they begin and once when they end.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path

from tether.fleet.fleet_db import FencedError, FleetDatabaseError, FleetStore
from tether.fleet.leases import Lease, renew
from tether.fleet.logs import outage_began, outage_ended

Say = Callable[[str], None]


def stop_margin(seconds: float) -> float:
    """How long before its lease could run out a worker stops its agents."""
    return max(1.5, 0.15 * seconds)


def kill_agents(homes: list[Path]) -> int:
    """SIGKILL the agent groups of the runs this process supervises in ``homes``."""
    from tether.store import state_db
    from tether.store.runs import running_runs

    killed = 0
    for home in homes:
        with contextlib.suppress(Exception):
            conn = state_db.connect(home)
            try:
                rows = running_runs(conn)
            finally:
                conn.close()
            for row in rows:
                if row.supervisor_pid == os.getpid() and row.agent_pgid:
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.killpg(row.agent_pgid, signal.SIGKILL)
                        killed += 1
    return killed


class Keeper:
    """The renewer and the watchdog threads of one worker's lease."""

    def __init__(
        self,
        store: FleetStore,
        lease: Lease,
        *,
        seconds: float,
        interval: float,
        homes: Callable[[], list[Path]],
        say: Say,
    ) -> None:
        self.store = store
        self.lease = lease
        self.seconds = seconds
        self.interval = interval
        self.homes = homes
        self.say = say
        self.fenced = threading.Event()
        self.stopped = threading.Event()
        self._valid_until = time.monotonic() + seconds - stop_margin(seconds)
        self._lost = False
        self._outage_since: float | None = None
        self._lock = threading.Lock()

    def start(self) -> None:
        for target, name in ((self._renew_loop, "renewer"), (self._watch_loop, "watchdog")):
            threading.Thread(target=target, name=f"tether-lease-{name}", daemon=True).start()

    def stop(self) -> None:
        self.stopped.set()

    @property
    def lost(self) -> bool:
        with self._lock:
            return self._lost

    def _renew_loop(self) -> None:
        from tether.runs.supervisor import allow_runs

        while not self.stopped.is_set():
            sent = time.monotonic()
            try:
                renew(self.store, self.lease, self.seconds)
            except FencedError as exc:
                self._lose(f"{exc}; this worker stops")
                self.fenced.set()
                return
            except FleetDatabaseError as exc:
                if self._outage_since is None:
                    self._outage_since = sent
                    outage_began(str(exc))
                    left = self._valid_until - time.monotonic()
                    self.say(
                        f"{exc}; retrying (agents stop in {max(0.0, left):.0f} s unless it is back)"
                    )
            else:
                with self._lock:
                    self._valid_until = sent + self.seconds - stop_margin(self.seconds)
                    regained, self._lost = self._lost, False
                if self._outage_since is not None:
                    away = sent - self._outage_since
                    outage_ended(away)
                    self.say(f"fleet database reachable again after {away:.0f} s")
                    self._outage_since = None
                if regained:
                    allow_runs()
                    self.say("lease renewed: agents may run again")
            self.stopped.wait(self.interval)

    def _watch_loop(self) -> None:
        while not self.stopped.wait(0.1):
            with self._lock:
                late = not self._lost and time.monotonic() > self._valid_until
            if late:
                self._lose("lease not renewed in time: this worker's agents are stopped")

    def _lose(self, why: str) -> None:
        from tether.runs.supervisor import cancel_all_runs

        with self._lock:
            already, self._lost = self._lost, True
        cancel_all_runs()
        killed = kill_agents(self.homes())
        if not already:
            self.say(f"{why} ({killed} agent group(s) killed)")
