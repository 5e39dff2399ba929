"""``tether dashboard``: the live local web dashboard (needs the ``dashboard`` extra)."""

from __future__ import annotations

import click

from tether.core.errors import ConfigError

MISSING = (
    "tether dashboard needs the dashboard extra (starlette, uvicorn): "
    "pip install 'tether[dashboard]'"
)


@click.command()
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8765,
    show_default=True,
    help="Port to listen on (0: any free port).",
)
@click.option(
    "--host",
    default=None,
    metavar="H",
    help="Interface to listen on (default 127.0.0.1; anything else is reachable by others).",
)
@click.option("--open", "open_browser", is_flag=True, help="Open the dashboard in a browser.")
def dashboard(port: int, host: str | None, open_browser: bool) -> None:
    """A live, read-only web view of runs, loop, watchdog and board on 127.0.0.1.

    Prints the URL with a random token; the browser trades it for a session
    cookie and drops it from the address bar; a request without either gets 403.
    Exit codes: 0 stopped with Ctrl-C or SIGTERM, 2 the port is in use, 3 a store
    tether cannot read or the dashboard extra missing.
    """
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ModuleNotFoundError:
        raise ConfigError(MISSING) from None
    from tether.config import load_config
    from tether.dashboard.server import LOCAL, bind, serve
    from tether.store.state_db import connect_reader

    config = load_config()
    conn = connect_reader(config.home)  # an unreadable store fails here, before listening
    if conn is not None:
        conn.close()
    if host is not None and host != LOCAL:
        click.echo(
            f"warning: listening on {host}: anyone who can reach it and has the URL sees "
            f"your runs; the token is the only protection.",
            err=True,
        )
    bound = bind(host or LOCAL, port)
    click.echo(f"tether dashboard: {bound.url}", err=False)
    click.echo("read-only; Ctrl-C stops it.")
    if open_browser:
        import webbrowser

        webbrowser.open(bound.open_url)  # a one-time code: the token stays out of argv
    try:
        serve(config, bound)
    except KeyboardInterrupt:
        return
