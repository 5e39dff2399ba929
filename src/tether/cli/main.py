"""``tether``: the root command group.

Sub-commands load lazily so that ``tether --help`` and each command pay only for
what they import.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

import click

from tether import __version__
from tether.core.errors import TetherError
from tether.core.exit_codes import ExitCode

# command name -> "module:attribute"; each module owns one command group.
COMMANDS: dict[str, str] = {
    "dashboard": "tether.cli.dashboard:dashboard",
    "demo": "tether.cli.demo:demo",
    "doctor": "tether.cli.doctor:doctor",
    "events": "tether.cli.events:events",
    "run": "tether.cli.run:run",
    "runs": "tether.cli.runs:runs",
    "report": "tether.cli.runs:report",
    "session": "tether.cli.session:session",
    "status": "tether.cli.status:status",
    "hooks": "tether.cli.hooks:hooks",
    "init": "tether.cli.init:init",
    "config": "tether.cli.config:config",
    "board": "tether.cli.board:board",
    "loop": "tether.cli.loop:loop",
    "wiki": "tether.cli.wiki:wiki",
    "ingest": "tether.cli.ingest:ingest",
    "room": "tether.cli.room:room",
    "watch": "tether.cli.watch:watch",
    "subagents": "tether.cli.subagents:subagents",
    "skills": "tether.cli.skills:skills",
    "fleet": "tether.cli.fleet:fleet",
    "mcp": "tether.cli.mcp:mcp",
    "outbox": "tether.cli.outbox:outbox",
}

# The first paragraph of each command's help, so that ``tether --help`` lists the
# commands without importing them all (the loop alone costs ~0.1 s of imports).
# A test keeps these equal to the commands' own help.
SUMMARIES: dict[str, str] = {
    "board": "The ticket board: Markdown tickets in state folders (INBOX, ACTIONABLE, ... DONE).",
    "config": "Show or check tether's configuration (tether.toml, TETHER_* variables).",
    "dashboard": "A live, read-only web view of runs, loop, watchdog and board on 127.0.0.1.",
    "demo": "Run the loop on an example board with the scripted agent (no agent CLI, no network).",
    "doctor": "Check that the gate stops each agent CLI found: claude-code, codex, copilot, pi, "
    "vibe.",
    "events": "Read a harness's machine-readable event stream.",
    "fleet": "Many projects' loops on any number of workers, durable (DBOS, PostgreSQL or SQLite).",
    "hooks": "Install or remove the tether-gate hook in an agent CLI.",
    "ingest": "The ingest queue: quarantine → incoming → one entry per run.",
    "init": "Write a commented tether.toml with what was found here: agent CLIs, board, sources.",
    "loop": "Work through the board one unit per fresh session; stop only with evidence.",
    "mcp": "tether's agent-facing operations as MCP tools; without a sub-command, serve over "
    "stdio.",
    "outbox": "Steps visible outside the work tree: a run proposes them, a person approves or "
    "rejects.",
    "report": "Print the progress report of a limit-stopped run.",
    "room": "A bounded room: one depth-1 run that reads at most B wiki pages and returns a "
    "short, cited conclusion.",
    "run": "Run one agent session on one unit within hard budgets.",
    "runs": "Inspect supervised runs.",
    "session": "Session ids the call-budget gate counts under.",
    "skills": "tether's skills (ingest, work-loop, room, watch) in each harness's skills folder.",
    "status": "One screen: runs, loop, watchdog, gate, ingest queue, room (read-only).",
    "subagents": "The subagents the watchdog sees, and the orchestrator's polling call.",
    "watch": "Wake the orchestrator when it sits idle while a subagent runs.",
    "wiki": "The wiki: Markdown pages with sources, links and a search index.",
}


def summary_of(name: str) -> click.Command:
    """A stand-in for the command ``name`` that knows only its summary."""
    return click.Command(name, help=SUMMARIES[name])


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module_name, _, attr = target.partition(":")
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name == module_name:
                return None
            raise
        command: click.Command = getattr(module, attr)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = [(name, summary_of(name).get_short_help_str(limit)) for name in names]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="tether")
def cli() -> None:
    """Keep coding agents on a short, visible leash."""


def main(argv: list[str] | None = None) -> Any:
    try:
        return cli.main(args=argv, prog_name="tether", standalone_mode=True)
    except TetherError as exc:
        click.echo(f"tether: error: {exc}", err=True)
        sys.exit(int(exc.exit_code))
    except KeyboardInterrupt:
        sys.exit(int(ExitCode.RUN_CANCELLED))


if __name__ == "__main__":
    main()
