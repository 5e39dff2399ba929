"""Driving a fleet from tests: a control folder, worker processes, waiting on status."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tether.fleet.fleet_db import FleetRun, FleetStore

TETHER = str(Path(sys.executable).parent / "tether")

FLEET_TOML = """\
[fleet]
heartbeat_interval = 0.5
dead_after = {dead_after}
poll_interval = 3600
"""


@dataclass
class Fleet:
    """One machine's view of a fleet: a folder with its tether.toml, a home, workers."""

    folder: Path
    database: str | None  # None: the embedded SQLite default
    dead_after: float = 8.0
    workers: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    _store: FleetStore | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        (self.folder / "tether.toml").write_text(
            FLEET_TOML.format(dead_after=self.dead_after), encoding="utf-8"
        )

    @property
    def home(self) -> Path:
        return self.folder / "home"

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("TETHER_")}
        env["TETHER_HOME"] = str(self.home)
        env["TETHER_USER_CONFIG"] = str(self.folder / "no-user-config.toml")
        if self.database is not None:
            env["TETHER_FLEET_DATABASE"] = self.database
        return env

    def tether(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [TETHER, *args],
            cwd=self.folder,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        if check and done.returncode != 0:
            raise AssertionError(f"tether {' '.join(args)} exited {done.returncode}: {done.stderr}")
        return done

    def start_worker(self, name: str, concurrency: int = 1) -> subprocess.Popen[bytes]:
        with (self.folder / f"{name}.log").open("ab") as log:
            proc = subprocess.Popen(
                [TETHER, "fleet", "worker", "--name", name, "--concurrency", str(concurrency)],
                cwd=self.folder,
                env=self.env(),
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.workers[name] = proc
        return proc

    def log(self, name: str) -> str:
        return (self.folder / f"{name}.log").read_text(encoding="utf-8", errors="replace")

    def status(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.tether("fleet", "status", "--json").stdout)
        return data

    def read_status(self) -> dict[str, Any] | None:
        """What ``fleet status --json`` prints, read in this process; None while unreadable.

        The same function the command calls, on this machine's configuration: a
        wait looks several times a second, and a command started for each look
        (its interpreter and imports, about 0.8 s of CPU) made the waits the
        largest CPU cost of the fleet's tests.
        """
        from tether.config import load_config
        from tether.fleet.fleet_db import FleetDatabaseError, FleetStore
        from tether.fleet.places import places
        from tether.fleet.status import fleet_status

        try:
            found = places(load_config(env=self.env(), cwd=self.folder))
            self._store = self._store or FleetStore.open(found.database)
            read = fleet_status(self._store, found).as_dict()
        except FleetDatabaseError:
            return None  # not created yet, or the server is away: look again
        data: dict[str, Any] = json.loads(json.dumps(read, default=str))
        return data

    def wait_until(self, what: str, predicate: Any, timeout: float = 120.0) -> dict[str, Any]:
        """The status ``fleet status --json`` prints, once it satisfies ``predicate``.

        Looked at in this process until it holds, then confirmed by the command itself.
        """
        deadline = time.monotonic() + timeout
        while True:
            seen = self.read_status()
            if seen is not None and predicate(seen):
                status = self.status()
                if predicate(status):
                    return status
            if time.monotonic() > deadline:
                logs = "\n".join(f"--- {n}\n{self.log(n)[-2000:]}" for n in self.workers)
                raise AssertionError(f"timed out waiting for {what}: {self.status()}\n{logs}")
            for name, proc in self.workers.items():
                if proc.poll() is not None and proc.returncode not in (0, -9):
                    raise AssertionError(
                        f"worker {name} exited {proc.returncode}:\n{self.log(name)}"
                    )
            time.sleep(0.3)

    def stop_all(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None
        for proc in self.workers.values():
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.workers.values():
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def run_spans(runs: list[FleetRun]) -> list[tuple[datetime, datetime]]:
    """Each run's (start, end), in the order they started."""
    return sorted(
        (datetime.fromisoformat(r.started_at or ""), datetime.fromisoformat(r.ended_at or ""))
        for r in runs
    )


def ever_two_at_once(runs: list[FleetRun]) -> bool:
    """Whether a run started before the one before it had ended."""
    return any(began < ended for (_, ended), (began, _) in pairwise(run_spans(runs)))


def one_at_a_time(runs: list[FleetRun], what: str) -> None:
    """Each run started once the one before it had ended: never two of ``what`` at once."""
    assert not ever_two_at_once(runs), f"two {what} at once: {run_spans(runs)}"


def all_stopped(names: list[str]) -> Any:
    """A status predicate: every named project's last signal line is a STOP."""

    def check(status: dict[str, Any]) -> bool:
        by_name = {p["name"]: p for p in status["projects"]}
        return all(
            n in by_name
            and by_name[n]["last_line"] is not None
            and "STOP" in by_name[n]["last_line"]
            and by_name[n]["worker"] is None
            for n in names
        )

    return check


def wait_for_live_run(url: str, project: str, events: int = 1, timeout: float = 120.0) -> str:
    """The id of the project's run in progress, once the database holds ``events`` lines of it."""
    import sqlalchemy as sa

    from tether.fleet.fleet_db import FleetDatabaseError, FleetStore
    from tether.fleet.places import sqlalchemy_url
    from tether.fleet.schema import live_runs, run_events

    deadline = time.monotonic() + timeout
    store: FleetStore | None = None
    try:
        while time.monotonic() < deadline:
            try:
                store = store or FleetStore.open(sqlalchemy_url(url))
                with store.begin() as conn:
                    live = conn.execute(
                        sa.select(live_runs.c.run_id).where(live_runs.c.project == project)
                    ).first()
                    if live is not None:
                        data = b"".join(
                            conn.execute(
                                sa.select(run_events.c.data).where(
                                    run_events.c.run_id == live.run_id
                                )
                            ).scalars()
                        )
                        if data.count(b"\n") >= events:
                            return str(live.run_id)
            except FleetDatabaseError:
                store = None
            time.sleep(0.2)
    finally:
        if store is not None:
            store.close()
    raise AssertionError(f"no run of {project} in progress with {events} event line(s)")
