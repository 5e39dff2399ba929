"""The one place the fleet reaches into DBOS beyond its public API.

Recovery. A worker that comes back under its own name (its supervisor
restarts it) has its pending workflows recovered by DBOS's own launch: the
executor id is the worker's name. A worker that never comes back (its machine
is gone) has them recovered by the worker that claimed its expired lease,
through the same function DBOS's launch and its admin server's recovery
endpoint use. DBOS 3.4 exposes it only as ``DBOS._recover_pending_workflows``;
its re-enqueue is guarded by the dead executor's id, so a duplicate recovery
never re-enqueues a workflow another executor has already taken.

The queue's thread. DBOS's queue manager starts one thread per queue, named
``queue-worker-<queue>``, and looks for queues registered after its launch
once a second. The fleet's queue is registered after the launch, so on a new
fleet database an executor would take its first unit up to a second after it
said it was ready. It says so only once that thread runs.

``tests/fleet/test_fleet_dbos_private.py`` fails when DBOS changes either.
"""

from __future__ import annotations

import threading
import time

QUEUE_THREAD_PREFIX = "queue-worker-"


def recover_executor(executor_id: str) -> int:
    """Re-enqueue the pending workflows of a dead executor; how many there were."""
    from dbos import DBOS

    handles = DBOS._recover_pending_workflows([executor_id])
    return len(handles)


def queue_is_polled(queue: str) -> bool:
    """Whether DBOS's thread that takes workflows from ``queue`` runs in this process."""
    name = QUEUE_THREAD_PREFIX + queue
    return any(t.name == name and t.is_alive() for t in threading.enumerate())


def wait_until_polled(queue: str, timeout: float) -> bool:
    """Wait up to ``timeout`` seconds for ``queue``'s thread; whether it runs."""
    deadline = time.monotonic() + timeout
    while not queue_is_polled(queue):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.01)
    return True
