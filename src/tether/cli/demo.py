"""``tether demo``: one supervised run, then the same agent on a tight leash."""

from __future__ import annotations

import sys

import click

from tether.cli.render import print_json

DEMO_PROMPT = "Run the scripted steps."


@click.command()
@click.option("--profile", help="Profile to demo (default: the default profile).")
@click.option("--json", "as_json", is_flag=True, help="Print both run records as JSON.")
def demo(profile: str | None, as_json: bool) -> None:
    """Run the default profile once freely and once with an iteration limit of 3.

    On a fresh machine the default profile is the built-in scripted harness (a
    real executable agent that speaks Claude Code's stream format), so this shows
    tether's counting, its hard stop and its progress report without any agent
    CLI installed.
    """
    from tether.runs.budget import StopReason
    from tether.runs.supervisor import RunRequest, supervise

    free = supervise(RunRequest(prompt=DEMO_PROMPT, profile=profile, unit="demo"))
    tight = supervise(
        RunRequest(prompt=DEMO_PROMPT, profile=profile, unit="demo-limited", iterations=3)
    )
    if as_json:
        print_json([free.record | {"report": free.report}, tight.record | {"report": tight.report}])
    else:
        for label, outcome in (("free run", free), ("limited run (--iterations 3)", tight)):
            led = outcome.ledger
            click.echo(
                f"{label}: {outcome.run_id} ended {outcome.stop.value} (exit "
                f"{int(outcome.exit_code)}): {led.iterations} iterations, {led.tool_calls} tool "
                f"calls, {led.tool_results} results, {led.open_tool_calls} open, "
                f"session {led.session_id or 'unknown'}"
            )
        if tight.paths is not None and tight.report is not None:
            click.echo(f"progress report of the limited run: {tight.paths.report_md}")
            click.echo(tight.report["session_line"])
    ok = free.stop is StopReason.COMPLETED and tight.stop in (
        StopReason.ITERATION_LIMIT, StopReason.COMPLETED
    )
    sys.exit(0 if ok else 1)
