"""``tether status``: what runs, what each budget has spent, why the loop stopped, who waits."""

from __future__ import annotations

import click


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print every panel as one JSON object.")
@click.option("--watch", "live", is_flag=True, help="Refresh in place until Ctrl-C.")
@click.option(
    "--interval",
    type=click.FloatRange(min=0.2),
    default=1.0,
    show_default=True,
    metavar="S",
    help="Seconds between refreshes with --watch.",
)
@click.option(
    "--ended",
    type=click.IntRange(min=0),
    default=10,
    show_default=True,
    metavar="N",
    help="How many ended runs to show.",
)
def status(as_json: bool, live: bool, interval: float, ended: int) -> None:
    """One screen: runs, loop, watchdog, gate, ingest queue, room (read-only).

    Exit codes: 0 shown, 2 bad flags, 3 a configuration or store tether cannot read.
    """
    from tether.config import load_config
    from tether.status.collect import Options, collect, look

    if as_json and live:
        raise click.UsageError("--json and --watch do not go together.")
    config = load_config()
    options = Options(ended=ended)
    if as_json:
        from tether.cli.render import print_json

        print_json(collect(config, options=options))
        return
    import sys

    from tether.status.textui import render, terminal_size, wants_colour
    from tether.status.view import screen

    colour = wants_colour(sys.stdout)
    if not live:
        width = terminal_size(sys.stdout)[0]
        sys.stdout.write(render(screen(look(config, options=options), width), colour))
        return
    from tether.status.live import redraw_until_interrupted

    redraw_until_interrupted(
        lambda: look(config, options=options), interval=interval, colour=colour
    )
