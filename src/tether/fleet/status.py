"""``tether fleet status``: every project, its worker, its last signal line, its queue."""

from __future__ import annotations

from tether.config import Config
from tether.fleet.fleet_db import FleetStore
from tether.fleet.panel import FleetPanel, FleetStatus, FleetUnreadable, ProjectStatus, WorkerStatus
from tether.fleet.places import Places, display


def queue_depths(places: Places) -> dict[str, dict[str, int]]:
    """Units waiting per project and DBOS status (ENQUEUED, DELAYED), from DBOS's records."""
    from dbos import DBOSClient

    from tether.fleet.engine import APP_NAME, QUEUE

    try:
        client = DBOSClient(
            system_database_url=places.database,
            application_name=APP_NAME,
            retry_connection_errors=False,
        )
    except Exception:
        return {}
    try:
        waiting = client.list_queued_workflows(
            queue_name=QUEUE, status=["ENQUEUED", "DELAYED"], load_input=False, load_output=False
        )
    except Exception:
        return {}
    finally:
        client.destroy()
    depths: dict[str, dict[str, int]] = {}
    for workflow in waiting:
        key = workflow.deduplication_id  # the project (engine.enqueue_unit)
        if key:
            counts = depths.setdefault(key, {})
            counts[workflow.status] = counts.get(workflow.status, 0) + 1
    return depths


def fleet_status(
    store: FleetStore, places: Places, *, now: float | None = None, queues: bool = True
) -> FleetStatus:
    """Workers and projects; ``queues=False`` skips asking DBOS for queue depths."""
    now = store.now() if now is None else now  # leases are on the server's clock
    workers = [
        WorkerStatus(
            name=w.name,
            worker=w.worker_group or w.name,
            host=w.host,
            pid=w.pid,
            alive=(w.lease_until or 0.0) > now,
            heartbeat_age=round(max(0.0, now - w.heartbeat_at), 1),
            lease_left=round((w.lease_until or 0.0) - now, 1),
            epoch=w.epoch or 0,
            concurrency=1,
            recovered_by=w.recovered_by,
        )
        for w in store.workers()
    ]
    depths = queue_depths(places) if queues else {}
    projects: list[ProjectStatus] = []
    for p in store.projects():
        counts = depths.get(p.name, {})
        depth = counts.get("ENQUEUED", 0)
        if p.stopped_reason:
            state = "stopped"
        elif p.paused:
            state = "paused"
        elif p.worker:
            state = "running"
        elif depth:
            state = "queued"
        else:
            state = "waiting"
        projects.append(
            ProjectStatus(
                name=p.name,
                repo=p.repo,
                branch=p.branch,
                state=state,
                worker=p.worker,
                unit_running_for=None
                if p.unit_started_at is None
                else round(max(0.0, now - p.unit_started_at), 1),
                last_line=p.last_line,
                last_exit=p.last_exit,
                last_at=p.last_at,
                units_done=p.units_done,
                queue_depth=depth,
                next_look_scheduled=counts.get("DELAYED", 0) > 0,
                stopped_reason=p.stopped_reason,
            )
        )
    return FleetStatus(display(places.database), workers, projects)


def status_panel(config: Config, *, now: float | None = None) -> FleetPanel | None:
    """The fleet as ``tether status`` shows it: None where this home knows no fleet.

    Read-only: no table is created and no database server is waited for; a
    fleet database that cannot be read is one line in ``error``.
    """
    from tether.fleet.fleet_db import FleetDatabaseError
    from tether.fleet.places import configured
    from tether.fleet.places import places as places_of

    if not configured(config):
        return None
    found = places_of(config)
    try:
        store = FleetStore.open(found.database, create=False)
        try:
            return fleet_status(store, found, now=now)
        finally:
            store.close()
    except FleetDatabaseError as exc:
        return FleetUnreadable(display(found.database), str(exc))
    except Exception as exc:  # a database without the fleet's tables, an odd URL
        first = str(exc).strip().splitlines()
        why = first[0] if first else type(exc).__name__
        return FleetUnreadable(display(found.database), f"cannot read the fleet: {why}")
