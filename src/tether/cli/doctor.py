"""``tether doctor``: prove, per agent CLI, that the gate stops it on this machine."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from tether.core.errors import UsageError
from tether.core.exit_codes import ExitCode

if TYPE_CHECKING:
    from tether.doctor.checks import Target
    from tether.doctor.model import DoctorReport, HarnessCheck


@click.command()
@click.option("--harness", metavar="NAME", help="Check only this agent CLI.")
@click.option("--json", "as_json", is_flag=True, help="Print the findings as one JSON object.")
@click.option(
    "--project-dir",
    metavar="DIR",
    type=click.Path(file_okay=False, exists=True),
    help="Project root (default: nearest parent with tether.toml, else the cwd).",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=1),
    metavar="S",
    help="Seconds each probe may take (default 60; Vibe 150).",
)
@click.option("--keep", is_flag=True, help="Keep each probe's folder (its logs) and print where.")
def doctor(
    harness: str | None,
    as_json: bool,
    project_dir: str | None,
    timeout: float | None,
    keep: bool,
) -> None:
    """Check that the gate stops each agent CLI found: claude-code, codex, copilot, pi, vibe.

    For each CLI on PATH (and each configured profile's): its version, where
    the gate hook is installed, what the CLI must trust first, and a live
    probe: the CLI run headless in this project against tether's scripted model
    server, gate budget 1, two tool calls that each create a file. It is
    `enforced` only when the second call was refused and did not run. The probe
    uses a throwaway HOME, TETHER_HOME and folder for the files: your sessions,
    budgets and gate.db are not touched.

    Exit codes: 0 every installed CLI is enforced, 40 one is not enforced,
    2 an unknown --harness.
    """
    from tether.core.project import project_root
    from tether.doctor.checks import HARNESSES, Progress, run_doctor

    if harness is not None and harness not in HARNESSES:
        raise UsageError(f"unknown harness {harness!r}; known: {', '.join(HARNESSES)}")
    root = str(Path(project_dir or project_root()).resolve())
    chosen = [harness] if harness else list(HARNESSES)
    report = run_doctor(
        root,
        dict(os.environ),
        chosen,
        timeout=timeout,
        keep=keep,
        progress=Progress(started=_say_start, done=_say_done),
    )
    if as_json:
        from tether.cli.render import print_json

        print_json(report.as_dict())
    else:
        _print(report)
    if not report.ok:
        sys.exit(int(ExitCode.CHECK_FAILED))


def _say_start(found: list[Target]) -> None:
    """Progress on stderr, so that stdout (the report, or its JSON) stays clean."""
    probed = [t.harness for t in found if t.executable]
    if probed:
        click.echo(f"doctor: probing {', '.join(probed)} side by side ...", err=True)


def _say_done(check: HarnessCheck) -> None:
    if check.executable is not None:
        click.echo(f"doctor: {check.line}", err=True)


def _print(report: DoctorReport) -> None:
    click.echo(f"project: {report.project}")
    for note in report.notes:
        click.echo(f"note: {note}")
    for check in report.checks:
        click.echo("")
        if check.executable is None:
            click.echo(check.line)
            continue
        click.echo(f"{check.harness}: {check.version or '(no version)'} — {check.executable}")
        if check.found_by != "PATH":
            click.echo(f"  found by: {check.found_by}")
        for hook in check.hooks:
            state = "gate installed" if hook.present else "no gate"
            if hook.present and not hook.current:
                state += " (another tether-gate)"
            if hook.error:
                state = f"unreadable: {hook.error}"
            click.echo(f"  hook ({hook.scope}): {hook.path}: {state}")
        hook_trust: dict[tuple[str, str, str], int] = {}
        for trust in check.trust:
            if trust.what.endswith(" hook"):
                # one line per hooks file and state: "codex project hooks in F: 9 trusted"
                where = trust.subject.rsplit(":", 3)[0]
                key = (trust.what, where, trust.state)
                hook_trust[key] = hook_trust.get(key, 0) + 1
            else:
                click.echo(f"  trust: {trust.what} {trust.subject}: {trust.state}")
        for (what, where, state), count in hook_trust.items():
            click.echo(f"  trust: {what}s in {where}: {count} {state}")
        probe = check.probe
        if probe is not None:
            second = "ran" if probe.second_ran else "did not run"
            click.echo(
                f"  probe: call 1 {'ran' if probe.first_ran else 'did not run'}, call 2 {second}; "
                f"gate allowed {probe.gate_allowed}, refused {probe.gate_refused}; "
                f"{probe.model_calls} model calls; {probe.seconds:g} s"
            )
            if probe.kept:
                click.echo(f"  probe folder: {probe.kept}")
        for note in check.notes:
            click.echo(f"  note: {note}")
        click.echo(check.line)
