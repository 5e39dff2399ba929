"""The fleet's tables as the commands and workers use them: projects, runs, signal lines.

Every write is one transaction. Leases (who may run what) are in
``tether.fleet.leases``; a unit's closing record, written in the same
transaction as its DBOS checkpoint, is ``record_unit`` below.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.exc import DBAPIError, IntegrityError

from tether.core.errors import TetherError
from tether.core.exit_codes import ExitCode
from tether.fleet.schema import metadata, projects, runs, server_now, signals, upgrade
from tether.fleet.schema import workers as workers_table


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
    incarnation: str
    holder_workflow: str | None
    holder_epoch: int | None
    loop_state: str | None


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
    lease_until: float | None = None
    epoch: int | None = None
    recovery: str | None = None
    worker_group: str | None = None


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
    workflow_id: str | None = None
    row_json: str | None = None


@dataclass(frozen=True)
class UnitRecord:
    """What a unit leaves in the fleet's tables when it ends (picklable: a step's output)."""

    project: str
    seq: int
    workflow_id: str
    worker: str
    epoch: int
    line: str
    exit_code: int
    did_work: bool
    runs: tuple[FleetRun, ...] = ()
    loop_state: str | None = None
    stop_reason: str | None = None  # the project stops for a person, with this reason
    # the closing look that ran in this unit (line, exit code): recorded as unit ``seq + 1``
    closing: tuple[str, int] | None = None

    @property
    def next_seq(self) -> int:
        """The sequence number of the chain's next unit."""
        return self.seq + (1 if self.closing is None else 2)


# what PostgreSQL reports when two sessions create the same table at the same moment
_CREATE_RACE = "pg_type_typname_nsp_index"


class FencedError(Exception):
    """This worker no longer holds the unit (its lease ran out or another took it over)."""


@contextmanager
def database_errors() -> Iterator[None]:
    """SQLAlchemy's errors that mean "cannot reach or use the database" as one line."""
    try:
        yield
    except DBAPIError as exc:
        raise FleetDatabaseError(f"cannot use the fleet database: {first_line(exc)}") from None


class FleetStore:
    """The fleet tables of one database."""

    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    @classmethod
    def open(cls, url: str, *, create: bool = True) -> FleetStore:
        """The fleet's tables at ``url``; ``create=False`` only reads (for ``tether status``)."""
        try:
            engine = sa.create_engine(url, pool_pre_ping=True)
        except Exception as exc:
            raise FleetDatabaseError(f"fleet database URL: {first_line(exc)}") from None
        store = cls(engine)
        if create:
            store.create()
        return store

    def create(self) -> None:
        for attempt in range(3):
            try:
                with database_errors(), self.engine.begin() as conn:
                    metadata.create_all(conn)
                    upgrade(conn)
                return
            except FleetDatabaseError as exc:
                # two processes creating the tables at once: the other one won; look again
                # (PostgreSQL says so as "already exists", or as a duplicate row type)
                lost = "already exists" in str(exc) or _CREATE_RACE in str(exc)
                if attempt == 2 or not lost:
                    raise
            except IntegrityError:
                if attempt == 2:
                    raise

    @contextmanager
    def begin(self) -> Iterator[sa.Connection]:
        with database_errors(), self.engine.begin() as conn:
            yield conn

    def now(self) -> float:
        """The database server's clock."""
        with self.begin() as conn:
            return float(conn.execute(sa.select(server_now(self.dialect))).scalar_one())

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
                    incarnation=uuid.uuid4().hex[:12],
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
        return None if row is None else project_of(row._mapping)

    def projects(self) -> list[Project]:
        with self.begin() as conn:
            rows = conn.execute(sa.select(projects).order_by(projects.c.name)).all()
        return [project_of(r._mapping) for r in rows]

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
            rows = conn.execute(to_kick_query()).all()
        return [project_of(r._mapping) for r in rows]

    def kicked(self, name: str, generation: int) -> None:
        with self.begin() as conn:
            conn.execute(
                projects.update()
                .where(projects.c.name == name)
                .where(projects.c.kicked_generation < generation)
                .values(kicked_generation=generation)
            )

    def stop_project(self, name: str, incarnation: str, reason: str) -> None:
        """The project stops for a person, with the reason (`fleet status` shows it)."""
        with self.begin() as conn:
            conn.execute(
                projects.update()
                .where(projects.c.name == name)
                .where(projects.c.incarnation == incarnation)
                .values(
                    paused=True,
                    stopped_reason=reason,
                    worker=None,
                    unit_started_at=None,
                    holder_workflow=None,
                    holder_epoch=None,
                )
            )

    # --- runs and signal lines ------------------------------------------------

    def runs_of(self, name: str) -> list[FleetRun]:
        with self.begin() as conn:
            rows = conn.execute(
                sa.select(runs).where(runs.c.project == name).order_by(runs.c.seq, runs.c.run_id)
            ).all()
        return [FleetRun(**r._mapping) for r in rows]

    def runs_by_id(self, run_ids: list[str]) -> list[FleetRun]:
        if not run_ids:
            return []
        with self.begin() as conn:
            rows = conn.execute(sa.select(runs).where(runs.c.run_id.in_(run_ids))).all()
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

    def workers(self) -> list[Worker]:
        with self.begin() as conn:
            rows = conn.execute(sa.select(workers_table).order_by(workers_table.c.name)).all()
        return [Worker(**r._mapping) for r in rows]


def to_kick_query() -> sa.Select[Any]:
    """The projects whose current generation has no unit enqueued yet."""
    return (
        sa.select(projects)
        .where(projects.c.paused.is_(False))
        .where(projects.c.kicked_generation < projects.c.generation)
    )


def project_of(row: Any) -> Project:
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
        incarnation=row["incarnation"] or "0",
        holder_workflow=row["holder_workflow"],
        holder_epoch=row["holder_epoch"],
        loop_state=row["loop_state"],
    )


def row_json(row: Any) -> str:
    return json.dumps(row, ensure_ascii=False, default=str)


def first_line(exc: BaseException) -> str:
    text = str(getattr(exc, "orig", None) or exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
