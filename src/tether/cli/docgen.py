"""Generates docs/reference/cli.md from the commands' own ``--help``.

``python -m tether.cli.docgen > docs/reference/cli.md``; a test fails when the
committed page differs from what the commands say, so the reference cannot drift.
"""

from __future__ import annotations

import sys

import click

from tether.cli.main import cli

HEADER = (
    "# Command-line reference\n\n"
    "Generated from the commands' `--help` by `python -m tether.cli.docgen`; "
    "a test keeps it in step with the code. `tether-gate` has its own page: "
    "[tether-gate](tether-gate.md).\n"
)


def _walk(command: click.Command, path: list[str], out: list[str]) -> None:
    ctx = click.Context(command, info_name=" ".join(path), terminal_width=100)
    level = "#" * min(len(path) + 1, 4)
    out.append(f"\n{level} `{' '.join(path)}`\n\n```text\n{command.get_help(ctx).rstrip()}\n```\n")
    if isinstance(command, click.Group):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                _walk(sub, [*path, name], out)


def render() -> str:
    out = [HEADER]
    _walk(cli, ["tether"], out)
    return "".join(out)


def main() -> None:
    sys.stdout.write(render())


if __name__ == "__main__":
    main()
