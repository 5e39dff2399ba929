"""``tether watch add-subagent`` / ``remove-subagent``: count a pane or process by hand."""

from __future__ import annotations

import click

from tether.cli.render import print_json
from tether.core.errors import UsageError


@click.command("add-subagent")
@click.option("--tmux-pane", metavar="%N", help="A pane whose agent is a subagent.")
@click.option(
    "--tmux-socket",
    metavar="NAME|PATH",
    help="The pane's tmux server: -L NAME or -S PATH (default: [watch] tmux_socket).",
)
@click.option("--pid", type=int, help="A subagent's process id (anywhere, in tmux or not).")
@click.option("--json", "as_json", is_flag=True)
def add_subagent(
    tmux_pane: str | None, tmux_socket: str | None, pid: int | None, as_json: bool
) -> None:
    """Count a pane or a process as a subagent, whatever subagents_scope says."""
    import psutil

    from tether.cli.watch_common import open_store, watch_settings
    from tether.watch.registry import add_subagent as add
    from tether.watch.tmux import Tmux

    if (tmux_pane is None) == (pid is None):
        raise UsageError("give exactly one of --tmux-pane %N or --pid N.")
    settings, home = watch_settings()
    socket = tmux_socket or settings.tmux_socket
    start_time = None
    if tmux_pane is not None and Tmux(socket).pane(tmux_pane) is None:
        where = f" on tmux server {socket}" if socket else ""
        raise UsageError(f"no tmux pane {tmux_pane}{where}; `tmux list-panes -a` shows them.")
    if pid is not None:
        try:
            start_time = psutil.Process(pid).create_time()
        except psutil.Error:
            raise UsageError(f"no process {pid}.") from None
    entry = add(
        open_store(home),
        tmux_pane=tmux_pane,
        tmux_socket=socket if tmux_pane else None,
        pid=pid,
        pid_start_time=start_time,
    )
    if as_json:
        print_json(entry.as_dict())
    else:
        what = f"pane {tmux_pane}" if tmux_pane else f"process {pid}"
        click.echo(f"subagent {entry.id} ({what}) added")


@click.command("remove-subagent")
@click.argument("subagent_id", type=int)
def remove_subagent(subagent_id: int) -> None:
    """Stop counting a subagent added with add-subagent."""
    from tether.cli.watch_common import open_store, watch_settings
    from tether.watch.registry import remove_subagent as remove

    _, home = watch_settings()
    if not remove(open_store(home), subagent_id):
        raise UsageError(f"no added subagent {subagent_id}.")
    click.echo(f"subagent {subagent_id} removed")
