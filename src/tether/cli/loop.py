"""``tether loop``: the evidence-based loop — one tick, a run of ticks, the stop hook."""

from __future__ import annotations

import sys

import click

from tether.cli.render import print_json


@click.group()
def loop() -> None:
    """Work through the board one unit per fresh session; stop only with evidence."""


@loop.command("tick")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the full evidence as JSON (the signal line goes to stderr).",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Decide and say what would be dispatched; run no agent, move no ticket.",
)
@click.option(
    "--profile",
    help="Profile for a dispatched run (default: [loop] profile or the default profile).",
)
@click.option("--justification", help="Why a profile stronger than the default is needed.")
def tick_cmd(as_json: bool, dry_run: bool, profile: str | None, justification: str | None) -> None:
    """Do one tick: level 1, else level 2 behind the guard; end with one signal line.

    Exit codes: 0 CONTINUE, 10 exhausted, 11 blind, 12 guard (exhausted),
    13 guard (blind), 14 user-only; without a signal line: 3 no agent profile
    configured and a unit would need one (a tick with nothing to run needs
    none), 30 another loop works this board, 41 an INBOX entry tether cannot
    triage (fix it by hand).
    """
    from tether.loop import ProfileChoice, open_loop, tick

    current = open_loop(chosen=ProfileChoice(profile, justification))
    current.refuse_demonstration = True
    try:
        result = tick(current, dry_run=dry_run)
    finally:
        current.close()
    if as_json:
        print_json(result.as_dict())
        click.echo(result.line, err=True)
    else:
        for line in result.lines():
            click.echo(line)
    sys.exit(int(result.exit_code))


@loop.command("run")
@click.option(
    "--max-ticks",
    type=click.IntRange(min=1),
    metavar="N",
    help="Stop after N ticks even without a STOP (default: [loop] max_ticks).",
)
@click.option("--profile", help="Profile for the dispatched runs.")
@click.option("--justification", help="Why a profile stronger than the default is needed.")
def run_cmd(max_ticks: int | None, profile: str | None, justification: str | None) -> None:
    """Tick until a STOP: one unit per fresh session, one after the other.

    Prints, per tick, one progress line and that tick's signal line (a STOP's
    bundle just before it), so the log can be read tick by tick. Ctrl-C stops
    cleanly after recording (exit 24); no agent profile configured when a
    unit needs one: exit 3.
    """
    from tether.loop import ProfileChoice, open_loop, run_loop
    from tether.loop.tick import TickResult

    def progress(number: int, result: TickResult) -> None:
        click.echo(f"tick {number}: {result.progress()}")
        for line in result.run_lines():
            click.echo(line)

    current = open_loop(chosen=ProfileChoice(profile, justification))
    current.refuse_demonstration = True
    try:
        outcome = run_loop(current, max_ticks=max_ticks, on_tick=progress)
    finally:
        current.close()
    if outcome.interrupted:
        click.echo(f"tether loop: stopped by Ctrl-C ({outcome.reason}); no STOP was proven.")
    sys.exit(int(outcome.exit_code))


@loop.command("stop-hook")
@click.option(
    "--harness",
    required=True,
    type=click.Choice(["claude-code", "codex", "copilot"]),
    help="Whose Stop hook contract to answer.",
)
def stop_hook_cmd(harness: str) -> None:
    """Answer an agent's Stop hook: keep it working while level 1 has autonomous work.

    Reads the hook payload on stdin. Blocks the stop (with the reason) only
    while there is work, never when the harness says the hook already made it
    continue more than [loop] stop_hook_max_blocks times in a row, and never
    on an error: a broken hook must not trap a session.
    """
    from tether.loop.stophook import main

    sys.exit(main(harness, sys.stdin.buffer.read()))
