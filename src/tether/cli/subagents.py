"""``tether subagents``: what the watchdog sees, and the orchestrator's own polling call."""

from __future__ import annotations

from typing import Any

import click

from tether.cli.render import print_json
from tether.cli.watch_common import open_store, watch_settings
from tether.cli.watch_status import not_counted_lines, wake_lines
from tether.core.errors import UsageError

RECENT_WAKES = 3


@click.group()
def subagents() -> None:
    """The subagents the watchdog sees, and the orchestrator's polling call."""


def _subagent_lines(survey: Any) -> list[str]:
    lines = []
    for view in survey.subagents:
        extra = ""
        if view.wait is not None and view.subagent.running:
            extra = f" — {view.wait.describe(survey.now)}"
        elif view.state in ("ended", "killed"):
            extra = f" — {view.subagent.ended_words()}"
        lines.append(f"  {view.state:<24} {view.subagent.label}{extra}")
    return lines + not_counted_lines(survey)


@subagents.command("list")
@click.option("--json", "as_json", is_flag=True)
def list_(as_json: bool) -> None:
    """Every subagent and its state (running, waits for confirmation, ended)."""
    import time

    from tether.watch.cycle_report import subagents_dict
    from tether.watch.survey import Surveyor

    settings, home = watch_settings()
    surveyor = Surveyor(settings, home)
    conn = open_store(home)
    survey = surveyor.look(conn, time.time())
    if as_json:
        print_json(subagents_dict(survey))
        return
    click.echo(f"{len(survey.running)} of {len(survey.subagents)} subagent(s) running")
    for line in _subagent_lines(survey):
        click.echo(line)
    for view in survey.orchestrators:
        if not view.alive:
            click.echo(f"orchestrator {view.orchestrator.name} is GONE ({view.gone})")
    wakes = wake_lines(home, conn, RECENT_WAKES)
    if wakes:
        click.echo("recent wakes (newest last):")
        for line in wakes:
            click.echo(f"  {line}")


@subagents.command("wait")
@click.option(
    "--timeout",
    type=float,
    default=30.0,
    show_default=True,
    help="Return after this many seconds when nothing changed.",
)
@click.option("--json", "as_json", is_flag=True)
def wait(timeout: float, as_json: bool) -> None:
    """Block until a subagent starts, waits for confirmation or ends; print all states."""
    from tether.watch.polling import wait_for_change
    from tether.watch.survey import Surveyor

    if timeout < 0:
        raise UsageError("--timeout must be 0 or more seconds.")
    settings, home = watch_settings()
    outcome = wait_for_change(Surveyor(settings, home), open_store(home), timeout=timeout)
    survey = outcome.survey
    if as_json:
        print_json(outcome.to_dict())
        return
    what = "; ".join(f"{c['key']}: {c['from'] or 'new'} -> {c['to']}" for c in outcome.changes)
    head = f"changed: {what}" if outcome.changed else f"no change in {timeout:g} s"
    click.echo(f"{len(survey.running)} subagent(s) running ({head})")
    for line in _subagent_lines(survey):
        click.echo(line)
