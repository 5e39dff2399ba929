"""``tether watch status``: what the person needs to see without reading a log."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import click

from tether.cli.render import print_json


def not_counted_lines(survey: Any) -> list[str]:
    """The agent processes seen but not counted, with the reason (never invisible)."""
    if not survey.not_counted:
        return []
    return ["seen, not counted as subagents:"] + [
        f"  {item.describe()}" for item in survey.not_counted
    ]


def wake_lines(home: Path, conn: sqlite3.Connection, limit: int) -> list[str]:
    """The newest wakes, "orchestrator gone" included, one line each (what the person was told)."""
    from tether.watch.acks import with_acks
    from tether.watch.registry import list_wakes

    lines = []
    for wake in (with_acks(home, w) for w in list_wakes(conn, limit=limit)):
        via = ", ".join(dict.fromkeys(c["channel"] for c in wake.channels if c["ok"])) or "nothing"
        tool = f" tool {wake.pending_tool}" if wake.pending_tool else ""
        lines.append(
            f"{wake.at} #{wake.id} {wake.reason}: {wake.subagent}{tool} via {via} ({wake.outcome})"
        )
    return lines


@click.command("status")
@click.option(
    "--limit", type=click.IntRange(min=1), default=10, show_default=True, help="The newest N wakes."
)
@click.option("--json", "as_json", is_flag=True)
def status(limit: int, as_json: bool) -> None:
    """The orchestrators (alive or gone, and why), the subagents, and the newest wakes."""
    import time

    from tether.cli.watch_common import open_store, watch_settings
    from tether.watch.acks import with_acks
    from tether.watch.cycle_report import subagent_dict
    from tether.watch.registry import list_wakes
    from tether.watch.survey import Surveyor

    settings, home = watch_settings()
    conn = open_store(home)
    surveyor = Surveyor(settings, home)
    try:
        survey = surveyor.look(conn, time.time())
    finally:
        surveyor.close()
    if as_json:
        print_json(
            {
                "orchestrators": [
                    {
                        "id": v.orchestrator.id,
                        "name": v.orchestrator.name,
                        "alive": v.alive,
                        "gone": v.gone,
                        "pane": v.pane,
                    }
                    for v in survey.orchestrators
                ],
                "subagents": [subagent_dict(v) for v in survey.subagents],
                "not_counted": [n.as_dict() for n in survey.not_counted],
                "wakes": [with_acks(home, w).as_dict() for w in list_wakes(conn, limit=limit)],
            }
        )
        return
    if not survey.orchestrators:
        click.echo("no orchestrator registered")
    for view in survey.orchestrators:
        state = "alive" if view.alive else f"GONE ({view.gone})"
        click.echo(f"orchestrator {view.orchestrator.id} ({view.orchestrator.name}): {state}")
    click.echo(f"{len(survey.running)} of {len(survey.subagents)} subagent(s) running")
    for sub in survey.subagents:
        click.echo(f"  {sub.state:<24} {sub.subagent.label}")
    for line in not_counted_lines(survey):
        click.echo(line)
    lines = wake_lines(home, conn, limit)
    click.echo("wakes (newest last):" if lines else "no wake yet")
    for line in lines:
        click.echo(f"  {line}")
