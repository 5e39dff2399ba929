"""``tether fleet``: many projects' loops on any number of workers (DBOS, PostgreSQL)."""

from __future__ import annotations

import re
import socket
from typing import TYPE_CHECKING

import click

from tether.cli.render import print_json, print_table

if TYPE_CHECKING:
    from tether.fleet.fleet_db import FleetStore
    from tether.fleet.places import Places

PROJECT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")


def _places() -> Places:
    from tether.config import load_config
    from tether.fleet.places import places

    return places(load_config())


def _store(places: Places) -> FleetStore:
    import threading

    from tether.fleet.fleet_db import FleetStore
    from tether.fleet.worker import ensure_database

    if not places.is_sqlite:
        stop = threading.Event()
        stop.set()  # one attempt: a command does not wait for the server
        ensure_database(places.database, lambda line: None, stop)
    return FleetStore.open(places.database)


def _echo(line: str) -> None:
    click.echo(f"tether fleet: {line}", err=True)


@click.group()
def fleet() -> None:
    """Many projects' loops on any number of workers, durable (DBOS, PostgreSQL or SQLite)."""
    import importlib.util

    from tether.core.errors import ConfigError

    missing = [m for m in ("dbos", "sqlalchemy") if importlib.util.find_spec(m) is None]
    if missing:
        raise ConfigError(
            f"tether fleet needs {' and '.join(missing)}: pip install 'tether[fleet]'"
        )


@fleet.command("add")
@click.argument("project")
@click.option("--repo", required=True, help="Any URL git can clone (file:// included).")
@click.option("--branch", default="main", show_default=True, help="The branch the loop works on.")
def add_cmd(project: str, repo: str, branch: str) -> None:
    """Add PROJECT: its loop starts on the next worker that looks."""
    from tether.core.errors import UsageError

    if not PROJECT_NAME.fullmatch(project):
        raise UsageError(
            f"project name {project!r}: start with a letter or digit; use letters, digits, "
            f"'_', '.' and '-' (at most 100)"
        )
    if not repo.strip():
        raise UsageError("--repo is empty")
    from tether.fleet.fleet_db import FleetError
    from tether.fleet.git import GitError, check_remote

    places = _places()
    try:
        check_remote(repo, branch)
    except GitError as exc:
        raise FleetError(f"not added: {exc}") from None
    store = _store(places)
    added = store.add_project(project, repo, branch)
    click.echo(f"added {added.name} ({added.repo}, branch {added.branch})")


@fleet.command("remove")
@click.argument("project")
def remove_cmd(project: str) -> None:
    """Remove PROJECT: no unit of it starts again (one in progress finishes)."""
    _store(_places()).remove_project(project)
    click.echo(f"removed {project}")


@fleet.command("pause")
@click.argument("project")
def pause_cmd(project: str) -> None:
    """Pause PROJECT: the unit in progress finishes, no next one starts."""
    _store(_places()).set_paused(project, True)
    click.echo(f"paused {project}")


@fleet.command("resume")
@click.argument("project")
def resume_cmd(project: str) -> None:
    """Resume a paused or stopped PROJECT: its loop starts again from the branch's head."""
    _store(_places()).set_paused(project, False)
    click.echo(f"resumed {project}")


@fleet.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print the projects as JSON.")
def list_cmd(as_json: bool) -> None:
    """The projects of the fleet."""
    found = _store(_places()).projects()
    if as_json:
        print_json([{"name": p.name, "repo": p.repo, "branch": p.branch} for p in found])
        return
    print_table(
        None,
        ["project", "repo", "branch", "paused"],
        [[p.name, p.repo, p.branch, "yes" if p.paused else ""] for p in found],
        whole=["project"],
    )


@fleet.command("status")
@click.option("--json", "as_json", is_flag=True, help="Print the fleet as one JSON object.")
def status_cmd(as_json: bool) -> None:
    """Every project: its worker, last signal line, unit in progress, queue depth."""
    from tether.fleet.status import fleet_status

    places = _places()
    status = fleet_status(_store(places), places)
    if as_json:
        print_json(status.as_dict())
        return
    print_table(
        f"executors, one unit at a time each ({status.database})",
        ["executor", "worker", "host", "pid", "alive", "lease left", "recovered by"],
        [
            [
                w.name,
                w.worker,
                w.host,
                w.pid,
                "yes" if w.alive else "no",
                f"{w.lease_left:.0f}s",
                w.recovered_by or "",
            ]
            for w in status.workers
        ],
        whole=["executor"],
    )
    print_table(
        "projects",
        ["project", "state", "worker", "units", "queued", "last signal line"],
        [
            [
                p.name,
                p.state,
                p.worker or "",
                p.units_done,
                p.queue_depth,
                p.stopped_reason if p.state == "stopped" else (p.last_line or ""),
            ]
            for p in status.projects
        ],
        whole=["project"],
    )


@fleet.command("worker")
@click.option(
    "--concurrency",
    type=click.IntRange(1, 64),
    default=1,
    show_default=True,
    help="Units of different projects this worker runs at once (one executor process each).",
)
@click.option("--name", help="The worker's name (default: host-pid); unique in the fleet.")
def worker_cmd(concurrency: int, name: str | None) -> None:
    """Run a fleet worker until Ctrl-C or SIGTERM (any number, on any number of machines)."""
    import os

    from tether.core.errors import UsageError
    from tether.fleet.worker import run_worker

    chosen = name or f"{socket.gethostname()}-{os.getpid()}"
    if not PROJECT_NAME.fullmatch(chosen):
        raise UsageError(f"worker name {chosen!r}: use letters, digits, '_', '.' and '-'")
    raise SystemExit(run_worker(_places(), name=chosen, concurrency=concurrency, say=_echo))
