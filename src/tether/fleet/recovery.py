"""The one place the fleet reaches into DBOS beyond its public API.

A worker that comes back under its own name (its supervisor restarts it) has
its pending workflows recovered by DBOS's own launch: the executor id is the
worker's name. A worker that never comes back (its machine is gone) has them
recovered by the worker that claimed its expired lease, through the same
function DBOS's launch and its admin server's recovery endpoint use. DBOS 3.4
exposes it only as ``DBOS._recover_pending_workflows``; its re-enqueue is
guarded by the dead executor's id, so a duplicate recovery never re-enqueues
a workflow another executor has already taken.

``tests/fleet/test_fleet_dbos_recovery.py`` fails when DBOS changes this function.
"""

from __future__ import annotations


def recover_executor(executor_id: str) -> int:
    """Re-enqueue the pending workflows of a dead executor; how many there were."""
    from dbos import DBOS

    handles = DBOS._recover_pending_workflows([executor_id])
    return len(handles)
