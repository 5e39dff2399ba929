"""``tether hooks``: put the call-budget gate into a harness's hook configuration."""

from __future__ import annotations

from pathlib import Path

import click

from tether.core.errors import ConfigError

HARNESS_CHOICE = click.Choice(["claude-code", "codex", "copilot", "pi", "vibe"])
SCOPE_CHOICE = click.Choice(["project", "user"])


@click.group()
def hooks() -> None:
    """Install or remove the tether-gate hook in an agent CLI."""


def _run(harness: str, scope: str, project_dir: str | None, dry_run: bool, install: bool) -> None:
    from tether.core.project import project_root
    from tether.gate import hook_command, hook_file, hook_install

    root = project_dir or project_root()
    try:
        change = hook_install.plan(harness, scope, install=install, project_dir=root)
    except hook_file.InstallError as exc:
        raise ConfigError(str(exc)) from None
    verb = "install" if install else "uninstall"
    if not change.changed:
        click.echo(f"{change.path}: already {verb}ed, nothing to change")
        return
    if dry_run:
        click.echo(change.diff(), nl=False)
        click.echo(f"(dry run: {change.path} not written)", err=True)
        return
    try:
        hook_file.apply(change)
    except OSError as exc:
        raise ConfigError(f"cannot write {change.path}: {exc}", path=change.path) from None
    if change.after is None:
        click.echo(f"removed {change.path}")
    else:
        click.echo(f"wrote {change.path}")
    if install:
        hook_install.byte_compile()
        click.echo(
            f"the gate runs as: {' '.join(hook_command.gate_argv())} hook --harness {harness}"
        )
        for note in hook_install.notes(harness, scope, change.path):
            click.echo(f"note: {note}")


_harness = click.option("--harness", required=True, type=HARNESS_CHOICE, help="The agent CLI.")
_scope = click.option(
    "--scope",
    type=SCOPE_CHOICE,
    default="project",
    show_default=True,
    help="project: this project's config; user: your user-wide config.",
)
_project = click.option(
    "--project-dir",
    metavar="DIR",
    type=click.Path(file_okay=False),
    help="Project root (default: nearest parent with tether.toml, else the cwd).",
)
_dry = click.option("--dry-run", is_flag=True, help="Print the diff; write nothing.")


_loop = click.option(
    "--loop",
    "with_loop",
    is_flag=True,
    help="Also the loop's Stop hook (`tether loop stop-hook`; claude-code, codex, copilot).",
)


def _loop_harness(harness: str, with_loop: bool) -> None:
    if with_loop and harness in ("pi", "vibe"):
        raise ConfigError("--loop: the loop's Stop hook is for claude-code, codex and copilot")


def _run_loop(
    harness: str, scope: str, project_dir: str | None, dry_run: bool, remove: bool
) -> None:
    from tether.core.project import project_root
    from tether.gate.hook_file import InstallError
    from tether.loop.stophook_install import install_stop_hook

    root = project_dir or project_root()
    try:
        lines = install_stop_hook(harness, scope, project_dir=root, remove=remove, dry_run=dry_run)
    except InstallError as exc:
        raise ConfigError(str(exc)) from None
    for line in lines:
        click.echo(line)


@hooks.command("install")
@_harness
@_scope
@_project
@_dry
@_loop
def install_cmd(
    harness: str, scope: str, project_dir: str | None, dry_run: bool, with_loop: bool
) -> None:
    """Write the gate into HARNESS's hook configuration (idempotent, merging)."""
    _loop_harness(harness, with_loop)
    _run(harness, scope, project_dir, dry_run, install=True)
    if with_loop:
        _run_loop(harness, scope, project_dir, dry_run, remove=False)


@hooks.command("uninstall")
@_harness
@_scope
@_project
@_dry
@_loop
def uninstall_cmd(
    harness: str, scope: str, project_dir: str | None, dry_run: bool, with_loop: bool
) -> None:
    """Remove tether's entries from HARNESS's hook configuration; others stay."""
    _loop_harness(harness, with_loop)
    _run(harness, scope, project_dir, dry_run, install=False)
    if with_loop:
        _run_loop(harness, scope, project_dir, dry_run, remove=True)


@hooks.command("trust")
@click.option(
    "--harness",
    required=True,
    type=click.Choice(["codex"]),
    help="The agent CLI (only Codex keeps a trust per hook).",
)
@click.option(
    "--scope",
    type=SCOPE_CHOICE,
    help="Only the gate hooks of this scope (default: both).",
)
@_project
@click.option(
    "--trust-project",
    is_flag=True,
    help="Also trust the project folder itself (what `codex exec --trust` saves): Codex "
    "then loads everything in its .codex folder, not only the gate.",
)
def trust_cmd(
    harness: str, scope: str | None, project_dir: str | None, trust_project: bool
) -> None:
    """Record Codex's trust for tether's gate hooks, through Codex itself.

    Codex runs a hook from hooks.json only once its user config.toml trusts
    that hook's current definition; this asks `codex app-server` which hooks
    load here and trusts tether's gate entries (never the user's other hooks),
    as Codex's own /hooks review would. Exit codes: 0 done, 3 Codex could not
    be asked, 4 no codex on PATH.
    """
    import shutil

    from tether.core.errors import HarnessNotFoundError
    from tether.core.project import project_root
    from tether.gate import codex_trust

    root = str(Path(project_dir or project_root()).resolve())
    codex = shutil.which("codex")
    if codex is None:
        raise HarnessNotFoundError("codex", "codex")
    try:
        if trust_project:
            codex_trust.trust_project(codex, root)
            click.echo(f"Codex now trusts the project {root}")
        trusted = codex_trust.trust_gate_hooks(codex, root, scope=scope)
        hooks = [h for h in codex_trust.list_hooks(codex, root) if h.ours]
    except codex_trust.CodexTrustError as exc:
        raise ConfigError(str(exc)) from None
    for hook in trusted:
        click.echo(f"trusted {hook.key}")
    if not hooks:
        click.echo(
            f"no gate hook loads in {root}: install it (`tether hooks install --harness codex`); "
            "a project's hooks load only once Codex trusts the project (--trust-project)"
        )
    elif not trusted:
        click.echo(f"the gate hooks that load in {root} were trusted already")
