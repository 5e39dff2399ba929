"""DBOS in a fleet executor: its configuration, its launch on the fleet queue, its stop.

The workflows and steps it runs are ``tether.fleet.engine``'s.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

from dbos import DBOS, DBOSConfig, SQLAlchemyDatasource

from tether.fleet.dbos_private import wait_until_polled
from tether.fleet.disconnects import mark_lost_connections
from tether.fleet.engine import APP_NAME, APP_VERSION, QUEUE, UNITS_IN_HAND
from tether.fleet.logs import log_to_file
from tether.fleet.workflow_context import Context, context, set_context

# DBOS looks for a queue registered after its launch once a second
QUEUE_THREAD_WAIT = 5.0
# How often an executor's DBOS thread looks at the queue. Its next unit is mostly in hand
# already (engine.UNITS_IN_HAND), so a poll only waits on the path when an executor has
# nothing to do; each poll is three round trips to the database, and at 4 polls a second
# instead of 10 bench/fleet.py counted about a tenth less CPU per unit at 4 workers.
QUEUE_POLL = 0.25


def dbos_config(url: str, executor_id: str) -> DBOSConfig:
    """DBOS's configuration for one executor of the fleet.

    DBOS's own engine does not ping a connection before each use: its queue
    thread checks out a connection twice per poll (the queue's row, then the
    dequeue), four times a second on every executor, and the pings were two of
    each poll's nine round trips to the server. A connection the server dropped
    (a restart) fails once instead; SQLAlchemy then discards the whole pool
    and DBOS retries its calls on such errors (``test_fleet_outage.py``).

    DBOS's notifier thread wakes every ``notification_coalesce_sec`` (0.01 s
    unless set) to send what events and streams have to announce; the fleet
    uses neither, so it wakes twice a second instead of a hundred times.
    """
    return {
        "name": APP_NAME,
        "system_database_url": url,
        "executor_id": executor_id,
        "application_version": APP_VERSION,
        "log_level": "WARNING",
        "notification_listener_polling_interval_sec": 0.5,
        "notification_coalesce_sec": 0.5,
        "db_engine_kwargs": {"pool_pre_ping": False},
    }


def start(ctx: Context, *, url: str, log_file: Path) -> None:
    """Launch DBOS in this process as the executor of ``ctx.lease``, on the fleet queue.

    DBOS's launch recovers this executor's own pending workflows (a worker that
    restarts under its name takes up what it left). Returns once DBOS's thread
    polls the queue (on a new fleet database up to a second after the launch),
    so that an executor that says it is ready takes units at once.
    """
    set_context(ctx)
    log_to_file(log_file)
    mark_lost_connections()
    DBOS(config=dbos_config(url, ctx.lease.worker))
    ctx.datasource = SQLAlchemyDatasource.create(url, engine_kwargs={"pool_pre_ping": True})
    DBOS.launch()
    ctx.queue = DBOS.register_queue(
        QUEUE,
        # one unit's tick at a time per executor (its turn), the next one in hand; a worker
        # of concurrency N runs N executors. Not partitioned: DBOS hands out the oldest unit
        # first, and a project's units never run at once as it has one on the queue at a
        # time (engine.enqueue_unit)
        worker_concurrency=UNITS_IN_HAND,
        polling_interval_sec=QUEUE_POLL,
        on_conflict="always_update",
    )
    if not wait_until_polled(QUEUE, QUEUE_THREAD_WAIT):
        logging.getLogger("dbos").warning(
            "no DBOS thread polls the queue %s %.0f s after its registration",
            QUEUE,
            QUEUE_THREAD_WAIT,
        )


def stop(wait: float) -> bool:
    """Stop taking units, give those in progress ``wait`` seconds; whether none is left.

    Units in hand that have not had their turn never get it (``Turn.close``),
    before the runs in progress are cancelled; they stay pending for this
    executor until the worker that takes over its released lease re-enqueues
    them, and are not waited for.
    """
    from tether.runs.supervisor import cancel_all_runs

    ctx = context()
    ctx.turn.close()
    cancel_all_runs()  # units in progress end in order: their runs cancelled, recorded
    deadline = time.monotonic() + wait
    while in_progress() and time.monotonic() < deadline:
        time.sleep(0.1)
    DBOS.destroy(destroy_registry=False, workflow_completion_timeout_sec=0)
    return not in_progress()


def is_fenced() -> bool:
    return context().fenced.is_set()


def in_progress() -> int:
    ctx = context()
    with ctx.lock:
        return len(ctx.active)
