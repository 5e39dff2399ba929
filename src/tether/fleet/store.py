"""The fleet's own tables, beside DBOS's in the same database (SQLite or PostgreSQL).

Projects, workers and their heartbeats, the runs the fleet made (with their
reports), and every signal line. Written through SQLAlchemy Core so the same
statements serve the embedded SQLite default and a shared PostgreSQL.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError, OperationalError

from tether.errors import TetherError
from tether.exit_codes import ExitCode

metadata = sa.MetaData()

projects = sa.Table(
    "tether_fleet_projects",
    metadata,
    sa.Column("name", sa.String(200), primary_key=True),
    sa.Column("repo", sa.Text, nullable=False),
    sa.Column("branch", sa.String(200), nullable=False),
    sa.Column("added_at", sa.Float, nullable=False),
    sa.Column("paused", sa.Boolean, nullable=False, default=False),
    # a pause or a stop ends the chain of this generation; resume starts the next
    sa.Column("generation", sa.Integer, nullable=False, default=1),
    # the generation whose first unit a worker has enqueued; the chain goes on by itself
    sa.Column("kicked_generation", sa.Integer, nullable=False, default=0),
    sa.Column("next_seq", sa.Integer, nullable=False, default=1),
    sa.Column("stopped_reason", sa.Text, nullable=True),
    sa.Column("worker", sa.String(200), nullable=True),  # holds the unit in progress
    sa.Column("unit_started_at", sa.Float, nullable=True),
    sa.Column("last_line", sa.Text, nullable=True),
    sa.Column("last_exit", sa.Integer, nullable=True),
    sa.Column("last_at", sa.Float, nullable=True),
    sa.Column("units_done", sa.Integer, nullable=False, default=0),
)

workers = sa.Table(
    "tether_fleet_workers",
    metadata,
    sa.Column("name", sa.String(200), primary_key=True),
    sa.Column("executor_id", sa.String(200), nullable=False),
    sa.Column("host", sa.String(200), nullable=False),
    sa.Column("pid", sa.Integer, nullable=False),
    sa.Column("started_at", sa.Float, nullable=False),
    sa.Column("heartbeat_at", sa.Float, nullable=False),
    sa.Column("concurrency", sa.Integer, nullable=False),
    # set once, by the worker that recovered this one's workflows after it went silent
    sa.Column("recovered_by", sa.String(200), nullable=True),
)

runs = sa.Table(
    "tether_fleet_runs",
    metadata,
    sa.Column("run_id", sa.String(100), primary_key=True),
    sa.Column("project", sa.String(200), nullable=False, index=True),
    sa.Column("seq", sa.Integer, nullable=False),
    sa.Column("worker", sa.String(200), nullable=False),
    sa.Column("unit", sa.Text, nullable=True),
    sa.Column("status", sa.String(50), nullable=False),
    sa.Column("exit_code", sa.Integer, nullable=True),
    sa.Column("follow_up_of", sa.String(100), nullable=True),
    sa.Column("iterations", sa.Integer, nullable=True),
    sa.Column("tool_calls", sa.Integer, nullable=True),
    sa.Column("started_at", sa.Text, nullable=True),
    sa.Column("ended_at", sa.Text, nullable=True),
    sa.Column("report", sa.Text, nullable=True),
)

signals = sa.Table(
    "tether_fleet_signals",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("project", sa.String(200), nullable=False, index=True),
    sa.Column("seq", sa.Integer, nullable=False),
    sa.Column("worker", sa.String(200), nullable=False),
    sa.Column("at", sa.Float, nullable=False),
    sa.Column("line", sa.Text, nullable=False),
    sa.Column("exit_code", sa.Integer, nullable=False),
)


class FleetError(TetherError):
    """A fleet command that cannot be done as asked (exit 2, like a usage error)."""

    exit_code = ExitCode.USAGE


class FleetDatabaseError(TetherError):
    """The fleet database cannot be reached or used (exit 3)."""

    exit_code = ExitCode.CONFIG


@dataclass(frozen=True)
class Project:
    name: str
    repo: str
    branch: str
    paused: bool
    generation: int
    next_seq: int
    stopped_reason: str | None
    worker: str | None
    unit_started_at: float | None
    last_line: str | None
    last_exit: int | None
    last_at: float | None
    units_done: int


@dataclass(frozen=True)
class Worker:
    name: str
    executor_id: str
    host: str
    pid: int
    started_at: float
    heartbeat_at: float
    concurrency: int
    recovered_by: str | None


@dataclass(frozen=True)
class FleetRun:
    run_id: str
    project: str
    seq: int
    worker: str
    unit: str | None
    status: str
    exit_code: int | None
    follow_up_of: str | None
    iterations: int | None
    tool_calls: int | None
    started_at: str | None
    ended_at: str | None
    report: str | None


class FleetStore:
    """The fleet tables of one database; every write is one transaction."""

    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine

    @classmethod
    def open(cls, url: str, *, create: bool = True) -> FleetStore:
        """The fleet's tables at ``url``; ``create=False`` only reads (for ``tether status``)."""
        engine = sa.create_engine(url, future=True, pool_pre_ping=True)
        store = cls(engine)
        if create:
            store.create()
        return store

    def create(self) -> None:
        try:
            metadata.create_all(self.engine)
        except IntegrityError:
            # two workers creating the tables at once: the other one won
            metadata.create_all(self.engine)
        except OperationalError as exc:
            raise FleetDatabaseError(f"cannot use the fleet database: {_first_line(exc)}") from None

    @contextmanager
    def begin(self) -> Iterator[sa.Connection]:
        try:
            with self.engine.begin() as conn:
                yield conn
        except OperationalError as exc:
            raise FleetDatabaseError(f"cannot use the fleet database: {_first_line(exc)}") from None

    def close(self) -> None:
        self.engine.dispose()

    # --- projects -------------------------------------------------------------

    def add_project(self, name: str, repo: str, branch: str) -> Project:
        with self.begin() as conn:
            existing = conn.execute(sa.select(projects).where(projects.c.name == name)).first()
            if existing is not None:
                raise FleetError(
                    f"project {name!r} is already in the fleet ({existing.repo}); "
                    f"`tether fleet remove {name}` first to change it"
                )
            conn.execute(
                projects.insert().values(
                    name=name,
                    repo=repo,
                    branch=branch,
                    added_at=time.time(),
                    paused=False,
                    generation=1,
                    kicked_generation=0,
                    next_seq=1,
                    units_done=0,
                )
            )
        return self.project(name)

    def project(self, name: str) -> Project:
        found = self.find_project(name)
        if found is None:
            raise FleetError(f"no project {name!r} in the fleet (`tether fleet list` shows them)")
        return found

    def find_project(self, name: str) -> Project | None:
        with self.begin() as conn:
            row = conn.execute(sa.select(projects).where(projects.c.name == name)).first()
        return None if row is None else _project(row._mapping)

    def projects(self) -> list[Project]:
        with self.begin() as conn:
            rows = conn.execute(sa.select(projects).order_by(projects.c.name)).all()
        return [_project(r._mapping) for r in rows]

    def remove_project(self, name: str) -> None:
        with self.begin() as conn:
            gone = conn.execute(projects.delete().where(projects.c.name == name)).rowcount
        if not gone:
            raise FleetError(f"no project {name!r} in the fleet (`tether fleet list` shows them)")

    def set_paused(self, name: str, paused: bool) -> Project:
        project = self.project(name)
        values: dict[str, Any] = {"paused": paused}
        if not paused:
            # a new chain: units of the paused (or stopped) one end when they see it
            values.update(generation=project.generation + 1, stopped_reason=None)
        with self.begin() as conn:
            conn.execute(projects.update().where(projects.c.name == name).values(**values))
        return self.project(name)

    def to_kick(self) -> list[Project]:
        """Projects whose current generation has no unit enqueued yet."""
        with self.begin() as conn:
            rows = conn.execute(
                sa.select(projects)
                .where(projects.c.paused.is_(False))
                .where(projects.c.kicked_generation < projects.c.generation)
            ).all()
        return [_project(r._mapping) for r in rows]

    def kicked(self, name: str, generation: int) -> None:
        with self.begin() as conn:
            conn.execute(
                projects.update()
                .where(projects.c.name == name)
                .where(projects.c.kicked_generation < generation)
                .values(kicked_generation=generation)
            )

    def stop_project(self, name: str, reason: str) -> None:
        with self.begin() as conn:
            conn.execute(
                projects.update()
                .where(projects.c.name == name)
                .values(paused=True, stopped_reason=reason, worker=None, unit_started_at=None)
            )

    def unit_started(self, name: str, worker: str) -> None:
        with self.begin() as conn:
            conn.execute(
                projects.update()
                .where(projects.c.name == name)
                .values(worker=worker, unit_started_at=time.time())
            )

    def unit_ended(
        self,
        name: str,
        *,
        seq: int,
        worker: str,
        line: str,
        exit_code: int,
        fleet_runs: list[FleetRun],
        did_work: bool,
        at: float | None = None,
    ) -> None:
        """The unit's signal line, its runs and the project's progress: one transaction."""
        now = time.time() if at is None else at
        with self.begin() as conn:
            conn.execute(
                signals.insert().values(
                    project=name, seq=seq, worker=worker, at=now, line=line, exit_code=exit_code
                )
            )
            for run in fleet_runs:
                conn.execute(runs.delete().where(runs.c.run_id == run.run_id))
                conn.execute(runs.insert().values(**run.__dict__))
            conn.execute(
                projects.update()
                .where(projects.c.name == name)
                .values(
                    worker=None,
                    unit_started_at=None,
                    last_line=line,
                    last_exit=exit_code,
                    last_at=now,
                    next_seq=sa.func.max(projects.c.next_seq, seq + 1)
                    if self.engine.dialect.name == "sqlite"
                    else sa.func.greatest(projects.c.next_seq, seq + 1),
                    units_done=projects.c.units_done + (1 if did_work else 0),
                )
            )

    # --- workers --------------------------------------------------------------

    def heartbeat(self, worker: Worker) -> None:
        with self.begin() as conn:
            updated = conn.execute(
                workers.update()
                .where(workers.c.name == worker.name)
                .values(
                    heartbeat_at=worker.heartbeat_at,
                    executor_id=worker.executor_id,
                    host=worker.host,
                    pid=worker.pid,
                    started_at=worker.started_at,
                    concurrency=worker.concurrency,
                    recovered_by=None,
                )
            ).rowcount
            if not updated:
                conn.execute(workers.insert().values(**worker.__dict__))

    def workers(self) -> list[Worker]:
        with self.begin() as conn:
            rows = conn.execute(sa.select(workers).order_by(workers.c.name)).all()
        return [Worker(**r._mapping) for r in rows]

    def claim_dead(self, rescuer: str, silent_since: float) -> list[Worker]:
        """Workers silent since before ``silent_since`` that nobody recovered yet, now ours."""
        claimed: list[Worker] = []
        for worker in self.workers():
            if worker.name == rescuer or worker.recovered_by is not None:
                continue
            if worker.heartbeat_at >= silent_since:
                continue
            with self.begin() as conn:
                won = conn.execute(
                    workers.update()
                    .where(workers.c.name == worker.name)
                    .where(workers.c.recovered_by.is_(None))
                    .where(workers.c.heartbeat_at == worker.heartbeat_at)
                    .values(recovered_by=rescuer)
                ).rowcount
            if won:
                claimed.append(worker)
        return claimed

    def worker_left(self, name: str) -> None:
        """A worker that stops cleanly: its pending work is recovered at once by the others."""
        with self.begin() as conn:
            conn.execute(workers.update().where(workers.c.name == name).values(heartbeat_at=0.0))

    # --- runs and signal lines ------------------------------------------------

    def runs_of(self, name: str) -> list[FleetRun]:
        with self.begin() as conn:
            rows = conn.execute(
                sa.select(runs).where(runs.c.project == name).order_by(runs.c.seq, runs.c.run_id)
            ).all()
        return [FleetRun(**r._mapping) for r in rows]

    def signal_lines(self, name: str) -> list[tuple[int, str, str, int]]:
        """(seq, worker, line, exit code) of every unit of the project, in order."""
        with self.begin() as conn:
            rows = conn.execute(
                sa.select(signals.c.seq, signals.c.worker, signals.c.line, signals.c.exit_code)
                .where(signals.c.project == name)
                .order_by(signals.c.id)
            ).all()
        return [(r.seq, r.worker, r.line, r.exit_code) for r in rows]


def _project(row: Any) -> Project:
    return Project(
        name=row["name"],
        repo=row["repo"],
        branch=row["branch"],
        paused=bool(row["paused"]),
        generation=row["generation"],
        next_seq=row["next_seq"],
        stopped_reason=row["stopped_reason"],
        worker=row["worker"],
        unit_started_at=row["unit_started_at"],
        last_line=row["last_line"],
        last_exit=row["last_exit"],
        last_at=row["last_at"],
        units_done=row["units_done"],
    )


def _first_line(exc: BaseException) -> str:
    text = str(getattr(exc, "orig", None) or exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
