"""``tether runs list|show`` and ``tether report``."""

from __future__ import annotations

import json
from pathlib import Path

import click

from tether.cli.render import print_json, print_table
from tether.run_status import RunStatus


def _open() -> tuple[object, Path]:
    from tether.runs.inspect import open_runs

    return open_runs()


@click.group()
def runs() -> None:
    """Inspect supervised runs."""


@runs.command("list")
@click.option(
    "--limit",
    default=50,
    show_default=True,
    type=click.IntRange(min=1),
    help="How many runs, newest first.",
)
@click.option(
    "--status",
    type=click.Choice([status.value for status in RunStatus]),
    help="Only runs with this status.",
)
@click.option("--json", "as_json", is_flag=True)
def list_(limit: int, status: str | None, as_json: bool) -> None:
    """List runs, newest first (runs whose supervisor died show as abandoned)."""
    from tether.runs.record import row_to_record
    from tether.store.runs import list_runs

    conn, _ = _open()
    rows = list_runs(conn, limit=limit, status=status)  # type: ignore[arg-type]
    if as_json:
        print_json([row_to_record(r) for r in rows])
        return
    print_table(
        None,
        ["run", "status", "unit", "profile", "iter", "calls", "started"],
        [
            (
                r.id,
                r.status,
                r.unit,
                r.profile,
                f"{r.iterations}/{r.iteration_limit}",
                r.tool_calls,
                r.started_at[:19],
            )
            for r in rows
        ],
        whole=("run",),
    )


@runs.command("show")
@click.argument("run_id")
@click.option("--json", "as_json", is_flag=True)
def show(run_id: str, as_json: bool) -> None:
    """Show one run's record."""
    from tether.runs.inspect import run_status

    record = run_status(run_id)
    if as_json:
        print_json(record)
        return
    for key, value in record.items():
        if key == "argv":
            value = " ".join(json.dumps(a) if " " in a else a for a in value)
        elif key == "followed_up_by":
            value = ", ".join(value) or "-"
        click.echo(f"{key:>20}: {value}")


@click.command()
@click.argument("run_id")
@click.option("--json", "as_json", is_flag=True, help="Print report.json instead of Markdown.")
def report(run_id: str, as_json: bool) -> None:
    """Print the progress report of a limit-stopped run."""
    from tether.runs.inspect import report_text

    click.echo(report_text(run_id, as_json=as_json), nl=False)
