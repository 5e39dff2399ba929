"""The fleet's own tables, beside DBOS's in the same database (SQLite or PostgreSQL).

Everything one worker needs from another lives here, never on a disk they
would have to share: projects and their loop memory, workers and their leases,
every run's record and report, the events of runs still going (so that
another machine can write the report of a run whose worker died), and every
signal line. Written through SQLAlchemy Core, so the same statements serve the
embedded SQLite default and a shared PostgreSQL.

Times that decide who may take whose work (leases) are the database server's
clock (``server_now``), never a worker's own.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

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
    # set at each add: workflow ids of a removed and re-added project never collide
    sa.Column("incarnation", sa.String(40), nullable=True),
    # the unit in progress: its workflow and the lease epoch of the worker running it
    sa.Column("holder_workflow", sa.String(300), nullable=True),
    sa.Column("holder_epoch", sa.Integer, nullable=True),
    # the loop's memory of this board (guard, seen items, routines, checks), as JSON
    sa.Column("loop_state", sa.Text, nullable=True),
)

workers = sa.Table(
    "tether_fleet_workers",
    metadata,
    sa.Column("name", sa.String(200), primary_key=True),  # the DBOS executor id
    sa.Column("executor_id", sa.String(200), nullable=False),
    sa.Column("host", sa.String(200), nullable=False),
    sa.Column("pid", sa.Integer, nullable=False),
    sa.Column("started_at", sa.Float, nullable=False),
    sa.Column("heartbeat_at", sa.Float, nullable=False),  # server clock
    sa.Column("concurrency", sa.Integer, nullable=False),
    # set by the worker that recovered this one's workflows after its lease ran out
    sa.Column("recovered_by", sa.String(200), nullable=True),
    # the lease: valid until this time of the server's clock, for this epoch only
    sa.Column("lease_until", sa.Float, nullable=True),
    sa.Column("epoch", sa.Integer, nullable=True),
    # "recovering" while a rescuer re-enqueues this worker's workflows, then "done"
    sa.Column("recovery", sa.String(20), nullable=True),
    # the `tether fleet worker --name` this executor belongs to
    sa.Column("worker_group", sa.String(200), nullable=True),
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
    sa.Column("workflow_id", sa.String(300), nullable=True),
    # the run's whole row of the run store, so any worker can follow it up
    sa.Column("row_json", sa.Text, nullable=True),
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
    sa.Column("workflow_id", sa.String(300), nullable=True),
)

# runs in progress, mirrored while they run: what another worker needs if this one dies
live_runs = sa.Table(
    "tether_fleet_live_runs",
    metadata,
    sa.Column("run_id", sa.String(100), primary_key=True),
    sa.Column("project", sa.String(200), nullable=False, index=True),
    sa.Column("worker", sa.String(200), nullable=False),
    sa.Column("row_json", sa.Text, nullable=False),
)

run_events = sa.Table(
    "tether_fleet_run_events",
    metadata,
    sa.Column("run_id", sa.String(100), primary_key=True),
    sa.Column("start", sa.BigInteger().with_variant(sa.Integer, "sqlite"), primary_key=True),
    sa.Column("data", sa.LargeBinary, nullable=False),
)


def server_now(dialect: str) -> Any:
    """The database server's clock, in seconds since the epoch, as a SQL expression."""
    if dialect == "sqlite":
        return sa.literal_column("((julianday('now') - 2440587.5) * 86400.0)", sa.Float)
    return sa.cast(sa.extract("epoch", sa.func.now()), sa.Float)


def upgrade(conn: sa.Connection) -> None:
    """Columns this version added to tables an earlier version made (all nullable)."""
    inspector = sa.inspect(conn)
    for table in metadata.sorted_tables:
        if not inspector.has_table(table.name):
            continue
        present = {c["name"] for c in inspector.get_columns(table.name)}
        for column in table.columns:
            if column.name in present:
                continue
            kind = column.type.compile(dialect=conn.dialect)
            conn.execute(sa.text(f'ALTER TABLE {table.name} ADD COLUMN "{column.name}" {kind}'))
