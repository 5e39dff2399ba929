"""``tether init``: write a commented tether.toml from what is found here."""

from __future__ import annotations

import os
from pathlib import Path

import click


@click.command()
def init() -> None:
    """Write a commented tether.toml with what was found here: agent CLIs, board, sources.

    Each agent CLI on PATH becomes a profile (the first one the default); the
    board, the TODO file and what each level-2 role's built-in source finds are
    written as comments. An existing tether.toml is never overwritten (exit 2).
    """
    from tether.loop.project_init import write

    target, found = write(Path.cwd(), os.environ)
    click.echo(f"wrote {target}")
    agents = ", ".join(found.harnesses) or "none on PATH (a tick that would run one refuses)"
    click.echo(f"  agent CLIs: {agents}")
    board = "tickets/" if found.board is not None else "none yet: `tether board init` makes it"
    click.echo(f"  board: {board}")
    for role, what in found.sources.items():
        click.echo(f"  {role}: {what}")
