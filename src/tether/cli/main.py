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
from tether.errors import TetherError
from tether.exit_codes import ExitCode

# command name -> "module:attribute"; each module owns one command group.
COMMANDS: dict[str, str] = {
    "demo": "tether.cli.demo:demo",
    "events": "tether.cli.events:events",
    "run": "tether.cli.run:run",
    "runs": "tether.cli.runs:runs",
    "report": "tether.cli.runs:report",
    "session": "tether.cli.session:session",
    "hooks": "tether.cli.hooks:hooks",
    "config": "tether.cli.config:config",
    "board": "tether.cli.board:board",
    "loop": "tether.cli.loop:loop",
    "wiki": "tether.cli.wiki:wiki",
    "ingest": "tether.cli.ingest:ingest",
    "room": "tether.cli.room:room",
    "watch": "tether.cli.watch:watch",
    "subagents": "tether.cli.subagents:subagents",
}


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
