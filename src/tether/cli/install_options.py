"""The options every ``tether … install|uninstall --harness NAME|--all`` command takes.

One home for them (skills and MCP registration share the shape): the harness
or ``--all``, the scope, the project folder, and a dry run.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import click

from tether.core.errors import UsageError


def install_options(
    *,
    harnesses: Sequence[str],
    harness_help: str,
    all_help: str,
    scope_help: str,
    dry_run_help: str,
) -> Callable[[Any], Any]:
    """``--harness``, ``--all``, ``--scope``, ``--project-dir`` and ``--dry-run``."""

    def decorate(func: Any) -> Any:
        func = click.option("--dry-run", is_flag=True, help=dry_run_help)(func)
        func = click.option(
            "--project-dir",
            type=click.Path(file_okay=False, path_type=Path),
            help="Project root (default: nearest parent with tether.toml, else the cwd).",
        )(func)
        func = click.option(
            "--scope",
            type=click.Choice(["project", "user"]),
            default="project",
            show_default=True,
            help=scope_help,
        )(func)
        func = click.option("--all", "every", is_flag=True, help=all_help)(func)
        func = click.option("--harness", type=click.Choice(list(harnesses)), help=harness_help)(
            func
        )
        return func

    return decorate


def chosen(harness: str | None, every: bool, all_names: Sequence[str]) -> list[str]:
    """The harnesses a command works on: the one named, or all of them."""
    if every == (harness is not None):
        raise UsageError("give exactly one of --harness NAME and --all")
    return list(all_names) if every else [harness or ""]


def project_dir_root(project_dir: Path | None) -> Path:
    """The project a command works in: the given folder's, else the working folder's."""
    from tether.core.project import project_root

    return Path(project_root(None if project_dir is None else str(project_dir)))
