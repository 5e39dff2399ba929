"""``tether mcp``: the MCP server over stdio, and its registration in each harness."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import click

from tether.cli.install_options import chosen, install_options, project_dir_root
from tether.harness_registry import BUILTIN


@click.group(invoke_without_command=True)
@click.pass_context
def mcp(ctx: click.Context) -> None:
    """tether's agent-facing operations as MCP tools; without a sub-command, serve over stdio.

    Tools: subagents_wait, subagents_list, loop_tick, board_list, board_add,
    board_show, room_brief, room_open, wiki_search, wiki_read, ingest_next,
    ingest_end, run_status, report_show. A failing call is an MCP tool error
    carrying the CLI's one-line message and exit code.
    """
    if ctx.invoked_subcommand is not None:
        return
    from tether.cli.mcp_server.server import serve

    serve()


# tether.cli.mcp_server.install.MCP_HARNESSES, without loading it for --help
HARNESS_NAMES = tuple(name for name in BUILTIN if name != "scripted")


_options = install_options(
    harnesses=HARNESS_NAMES,
    harness_help="The agent CLI (pi: Pi 1.x's mcp.json; Pi 0.73 has no MCP client).",
    all_help="claude-code, codex, copilot, pi and vibe.",
    scope_help="project: this project's MCP configuration; user: your user-wide one.",
    dry_run_help="Print the diff; write nothing.",
)
_force = click.option(
    "--force",
    is_flag=True,
    help="Replace (or remove) an entry named tether that tether did not write.",
)


@dataclass(frozen=True)
class _Asked:
    """The flags install and uninstall share."""

    harness: str | None
    every: bool
    scope: str
    project_dir: Path | None
    dry_run: bool
    force: bool


def _run(asked: _Asked, *, install: bool) -> None:
    from tether.cli.mcp_server import install as mcp_install

    root = project_dir_root(asked.project_dir)
    verb = "registered in" if install else "removed from"
    names = chosen(asked.harness, asked.every, HARNESS_NAMES)
    planner = mcp_install.Planner(asked.scope, root, install=install, force=asked.force)
    # every file is planned before any is written: one refusal writes nothing at all
    changes = [(name, planner.plan(name)) for name in names]
    for name, change in changes:
        if not change.changed:
            click.echo(f"{name}: {change.path}: nothing to change")
            continue
        if asked.dry_run:
            click.echo(change.diff(), nl=False)
            click.echo(f"(dry run: {change.path} not written)", err=True)
            continue
        mcp_install.apply(change)
        click.echo(f"{name}: tether {verb} {change.path}")
        if install:
            for note in mcp_install.notes(name, asked.scope):
                click.echo(f"note: {note}")


@mcp.command("install")
@_options
@_force
def install_cmd(
    harness: str | None,
    every: bool,
    scope: str,
    project_dir: Path | None,
    dry_run: bool,
    force: bool,
) -> None:
    """Register `tether mcp` in HARNESS's MCP configuration (idempotent; other servers stay).

    The entry is named tether and marked as tether's; an entry of that name tether did not
    write is refused (exit 41) unless --force.
    """
    _run(_Asked(harness, every, scope, project_dir, dry_run, force), install=True)


@mcp.command("uninstall")
@_options
@_force
def uninstall_cmd(
    harness: str | None,
    every: bool,
    scope: str,
    project_dir: Path | None,
    dry_run: bool,
    force: bool,
) -> None:
    """Remove tether's own entry from HARNESS's MCP configuration; other servers stay."""
    _run(_Asked(harness, every, scope, project_dir, dry_run, force), install=False)
