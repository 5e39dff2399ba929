"""``tether config``: show the effective configuration, check configuration files."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

from tether.cli.render import print_json, print_table
from tether.config import check_layer, find_project_file, load_config, user_file_path
from tether.core.errors import TetherError
from tether.core.exit_codes import ExitCode


@click.group()
def config() -> None:
    """Show or check tether's configuration (tether.toml, TETHER_* variables)."""


@config.command()
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def show(as_json: bool) -> None:
    """Print every effective setting and where its value came from.

    Sources: flag, env:TETHER_<NAME>, project:<file>, user:<file>, default.
    """
    effective = load_config()
    data = effective.as_dict()
    if as_json:
        print_json(data)
        return
    click.echo(f"project root: {data['project_root']}")
    click.echo(f"project file: {data['project_file'] or '(none)'}")
    click.echo(f"user file:    {data['user_file'] or '(none)'}")
    print_table(
        "settings",
        ["key", "value", "source"],
        [(key, _show(item["value"]), item["source"]) for key, item in data["settings"].items()],
    )
    print_table(
        "profiles",
        ["name", "harness", "model", "default", "strength", "limits", "source"],
        [
            (
                name,
                profile["harness"],
                profile["model"],
                "yes" if profile["default"] else "",
                profile["strength"],
                _limits(profile),
                profile["source"],
            )
            for name, profile in data["profiles"].items()
        ],
    )


@config.command()
@click.argument("files", nargs=-1, type=click.Path(dir_okay=False, path_type=Path))
@click.pass_context
def check(ctx: click.Context, files: tuple[Path, ...]) -> None:
    """Validate configuration files; list every problem found.

    Without FILES: the user file and the project file that apply here, then the
    effective configuration with the TETHER_* environment. Exit 3 on any problem.
    """
    problems: list[TetherError] = []
    targets: list[tuple[Path, str]] = [(path, "file") for path in files]
    if not files:
        user = user_file_path(os.environ)
        if user.is_file():
            targets.append((user, "user"))
        project = find_project_file(Path.cwd())
        if project is not None:
            targets.append((project, "project"))
    for path, kind in targets:
        _, found = check_layer(path, kind, str(path))
        problems.extend(found)
        if not found:
            click.echo(f"ok: {path}")
    if not files and not problems:
        try:
            effective = load_config()
        except TetherError as exc:
            problems.append(exc)
        else:
            default = effective.default_profile.name
            click.echo(f"ok: effective configuration (default profile: {default})")
    for problem in problems:
        click.echo(f"tether: error: {problem}", err=True)
    if problems:
        ctx.exit(int(ExitCode.CONFIG))


def _show(value: Any) -> str:
    if value is None:
        return "(none)"
    return str(value)


def _limits(profile: dict[str, Any]) -> str:
    parts = [
        f"{label}={profile[key]}"
        for key, label in (
            ("iteration_limit", "iterations"),
            ("tool_call_limit", "tool_calls"),
            ("timeout_seconds", "timeout"),
        )
        if profile[key] is not None
    ]
    return " ".join(parts)
