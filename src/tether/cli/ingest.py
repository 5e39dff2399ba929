"""``tether ingest``: one source per run, with a hard end and a fixed next-step line."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from tether.cli.wiki import root_option
from tether.core.errors import UsageError

if TYPE_CHECKING:
    from tether.cli.wiki_context import WikiContext
    from tether.ingest.queue import Queue
    from tether.ingest.unattended import EntryResult


def _queue(root: str | None) -> tuple[WikiContext, Queue]:
    from tether.cli.wiki_context import load_context
    from tether.ingest.queue import Queue

    ctx = load_context(root)
    return ctx, Queue(ctx.wiki)


def _print(data: Any) -> None:
    from tether.cli.render import print_json

    print_json(data)


@click.group()
def ingest() -> None:
    """The ingest queue: quarantine → incoming → one entry per run."""


@ingest.command("collect")
@root_option
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option(
    "--capture",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE.json",
    help="Capture manifest (fidelity, authority, dialog) for these entries.",
)
@click.option("--json", "as_json", is_flag=True)
def collect_cmd(
    root: str | None, paths: tuple[Path, ...], capture: Path | None, as_json: bool
) -> None:
    """Copy new files (or folders: bundles) into quarantine/ with a manifest.

    A symlink in a bundle is kept only when it resolves inside the bundle;
    others (and special files) are left out, listed here and in the manifest.
    """
    from tether.ingest.intake import Duplicate
    from tether.ingest.manifest import load_capture

    _, queue = _queue(root)
    fields = load_capture(capture)
    results = [queue.collect(p, capture=fields) for p in paths]
    if as_json:
        _print([r.as_dict() for r in results])
        return
    for r in results:
        if isinstance(r, Duplicate):
            click.echo(f"{r.id}: already collected ({r.of})")
            continue
        click.echo(f"{r.id}: collected into quarantine/ ({r.kind}, {r.size} bytes)")
        for skipped in r.skipped:
            click.echo(f"  left out {skipped}")
    click.echo(
        "Nothing in quarantine/ is shown to an agent; `tether ingest release ID` "
        "moves an entry to incoming/."
    )


@ingest.command("release")
@root_option
@click.argument("ids", nargs=-1, required=True)
@click.option("--json", "as_json", is_flag=True)
def release_cmd(root: str | None, ids: tuple[str, ...], as_json: bool) -> None:
    """Human action: move entries from quarantine/ to incoming/ (never overwrites)."""
    _, queue = _queue(root)
    results = queue.release(list(ids))
    if as_json:
        _print([r.as_dict() for r in results])
        return
    for r in results:
        click.echo(f"{r.id}: released to incoming/")


@ingest.command("status")
@root_option
@click.option("--json", "as_json", is_flag=True)
def status_cmd(root: str | None, as_json: bool) -> None:
    """Entries in quarantine, waiting in incoming, and claimed by runs."""
    from tether.ingest.intake import quarantine_view

    _, queue = _queue(root)
    quarantine = quarantine_view([e.id for e in queue.quarantined()])
    waiting = [e.id for e in queue.waiting()]
    claimed = [(e.id, e.claim()) for e in queue.claims()]
    done = len(queue.finished())
    if as_json:
        shown = [{"id": entry_id, **c.as_dict()} for entry_id, c in claimed]
        _print({"quarantine": quarantine, "waiting": waiting, "claimed": shown, "done": done})
        return
    click.echo(f"quarantine ({len(quarantine)}): {', '.join(quarantine) or '-'}")
    click.echo(f"waiting    ({len(waiting)}): {', '.join(waiting) or '-'}")
    for entry_id, c in claimed:
        click.echo(f"claimed    {entry_id} by {c.owner or '?'} since {c.claimed_at}")
    click.echo(f"done       {done}")


@ingest.command("next")
@root_option
@click.option("--json", "as_json", is_flag=True)
def next_cmd(root: str | None, as_json: bool) -> None:
    """Claim exactly one entry (oldest first) and print it with the ingest instructions."""
    from tether.ingest.steps import claim_next

    ctx, queue = _queue(root)
    claim = claim_next(ctx.wiki)
    if claim is None:
        loose = queue.loose_files()
        if as_json:
            _print(None)
        elif loose:
            shown = ", ".join(loose[:5]) + (f" and {len(loose) - 5} more" if len(loose) > 5 else "")
            click.echo(
                f"no released entry waits, but incoming/ holds {len(loose)} file(s) put there by "
                f"hand: {shown}. A person releases each: `tether ingest collect PATH`, then "
                f"`tether ingest release ID`."
            )
        else:
            click.echo("nothing waits in incoming/")
        return
    if as_json:
        _print(claim.to_dict())
        return
    if claim.resumed:
        click.echo(f"(this session's open claim, taken up again: {claim.entry_id})")
    click.echo(claim.instructions, nl=False)


@ingest.command("end")
@root_option
@click.option(
    "--entry", "entry_id", metavar="ID", help="The claimed entry (default: this session's claim)."
)
def end_cmd(root: str | None, entry_id: str | None) -> None:
    """Mark the claimed entry done; prints the fixed line for what still waits (sources,
    bundles), nothing when nothing waits."""
    from tether.ingest.steps import end_claim

    ctx, _ = _queue(root)
    for line in end_claim(ctx.wiki, ctx.settings, entry_id):
        click.echo(line)


@ingest.command("continue-here")
@click.option(
    "--session",
    "session_id",
    metavar="ID",
    help="The session (or context) to follow; default: the one that passed the gate last.",
)
def continue_here_cmd(session_id: str | None) -> None:
    """The user's explicit request to go on in this context: say why not, then a new session id."""
    from tether.cli.session import SessionRefusedError
    from tether.core.project import resolve_home
    from tether.gate.newsession import REASON_USER, NewSessionRefusedError, new_session
    from tether.ingest.instructions import RECOMMENDATION

    click.echo(RECOMMENDATION)
    try:
        record = new_session(resolve_home(), reason=REASON_USER, session=session_id)
    except NewSessionRefusedError as exc:
        raise SessionRefusedError(str(exc)) from None
    click.echo(
        f"Going on in this context, as asked: the next run counts under the new session "
        f"id {record.session_id} (follows {record.previous_session_id})."
    )


@ingest.command("requeue")
@root_option
@click.argument("entry_id", metavar="ID")
def requeue_cmd(root: str | None, entry_id: str) -> None:
    """Human action: give a claimed entry (of a crashed run) back to incoming/."""
    _, queue = _queue(root)
    entry = queue.requeue(entry_id)
    click.echo(f"{entry.id}: back in incoming/")


@ingest.command("run")
@root_option
@click.option("--profile", metavar="NAME", help="Profile for each run.")
@click.option("--limit", type=click.IntRange(min=1), help="At most N runs.")
@click.option("--timeout", type=float, metavar="SECONDS", help="Wall-clock cap per run.")
@click.option(
    "--board",
    "board_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="The ticket board for entries that need the user (default: ./tickets).",
)
@click.option("--json", "as_json", is_flag=True)
def run_cmd(
    root: str | None,
    profile: str | None,
    limit: int | None,
    timeout: float | None,
    board_dir: Path | None,
    as_json: bool,
) -> None:
    """Unattended: one fresh run per entry, one after another; holds go to the board."""
    from tether.ingest.unattended import Unattended, run_unattended

    ctx, _ = _queue(root)
    board_root = board_dir or ctx.config.project_root / "tickets"

    def report(result: EntryResult) -> None:
        if as_json:
            return
        if result.status == "user":
            click.echo(
                f"{result.id}: needs the user -> ticket {result.ticket} "
                f"({'; '.join(result.reasons)})"
            )
        elif result.run is not None:
            click.echo(
                f"{result.id}: {result.status} (run {result.run.run_id}, session "
                f"{result.run.session_id})"
            )

    plan = Unattended(board_root, profile or ctx.settings.ingest_profile, timeout, limit)
    results = run_unattended(ctx.wiki, plan, env=os.environ, report=report)
    if as_json:
        _print([r.as_dict() for r in results])
    elif not results:
        click.echo("nothing waits in incoming/")
    failed = [r for r in results if r.status not in ("done", "user")]
    if failed:
        raise UsageError(f"{len(failed)} runs did not complete: {', '.join(r.id for r in failed)}")
