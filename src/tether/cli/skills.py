"""``tether skills``: put tether's skills where each harness loads them, or take them out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from tether.cli.install_options import chosen, install_options, project_dir_root
from tether.harness_registry import BUILTIN

# the agent CLIs (tether.skills.HARNESSES, without loading the skills package)
HARNESS_NAMES = tuple(name for name in BUILTIN if name != "scripted")


@click.group()
def skills() -> None:
    """tether's skills (ingest, work-loop, room, watch) in each harness's skills folder."""


def _targets(harness: str | None, every: bool) -> list[str]:
    return chosen(harness, every, HARNESS_NAMES)


_root = project_dir_root
_options = install_options(
    harnesses=HARNESS_NAMES,
    harness_help="The agent CLI.",
    all_help="Every harness tether knows.",
    scope_help="project: this project's skills folder; user: your user-wide one.",
    dry_run_help="Print the plan; write nothing.",
)


def _run(plan: Any, dry_run: bool) -> None:
    from tether.skills import apply_plan

    for action in plan.actions:
        click.echo(f"{action.harness:<12} {action.line()}")
    if dry_run:
        click.echo("(dry run: nothing written)", err=True)
        if plan.refused:
            apply_plan(plan)  # raises: the same refusal, nothing written
        return
    apply_plan(plan)


@skills.command("install")
@_options
def install_cmd(
    harness: str | None, every: bool, scope: str, project_dir: Path | None, dry_run: bool
) -> None:
    """Write the skills for HARNESS (or --all); never over a folder tether did not write."""
    from tether.skills import plan_install

    _run(plan_install(_targets(harness, every), scope, _root(project_dir)), dry_run)


@skills.command("uninstall")
@_options
def uninstall_cmd(
    harness: str | None, every: bool, scope: str, project_dir: Path | None, dry_run: bool
) -> None:
    """Remove the skills tether wrote for HARNESS (or --all); others stay."""
    from tether.skills import plan_uninstall

    plan = plan_uninstall(_targets(harness, every), scope, _root(project_dir))
    if not plan.actions:
        click.echo("no tether skill is installed there")
        return
    _run(plan, dry_run)
