"""``tether room``: brief (W01+W02), open (W03), conclude and check (W04)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from tether.cli.wiki import root_option
from tether.core.errors import CheckFailedError, UsageError

if TYPE_CHECKING:
    from tether.room.brief import Brief
    from tether.room.room import RoomResult


@click.group()
def room() -> None:
    """A bounded room: one depth-1 run that reads at most B wiki pages and returns a
    short, cited conclusion."""


def _budget(ctx_budget: int, given: int | None) -> int:
    return given if given is not None else ctx_budget


def _print_notes(brief: Brief) -> None:
    """What the brief says about how it was made (an endpoint it could not use), on stderr."""
    for note in brief.notes:
        click.echo(f"note: {note}", err=True)


def _print_brief(brief: Brief) -> None:
    pages = brief.pages
    if brief.read_directly:
        click.echo(f"read directly ({len(pages)} pages, no room needed):")
    else:
        click.echo(f"room brief: {len(pages)} of B={brief.budget} pages")
    for page in pages:
        flag = f"  STALE: {page.stale_reason}" if page.stale else ""
        via = f"  via {'; '.join(page.via)}" if page.via else ""
        click.echo(f"  {page.why:<9} {page.id}  ({page.path}){via}{flag}")
    _print_cut(brief)


def _print_cut(brief: Brief) -> None:
    for line in cut_lines(brief):
        click.echo(line)


def cut_lines(brief: Brief) -> list[str]:
    """The pages the budget left out, and which of them are stale."""
    cut = brief.cut
    if not cut:
        return []
    more = brief.cut_total - len(cut)
    lines = [
        f"  cut by the budget ({brief.cut_total}): {', '.join(p.id for p in cut)}"
        + (f" … and {more} more" if more > 0 else "")
    ]
    stale = [p for p in cut if p.stale]
    if stale:
        lines.append("  cut and stale: " + "; ".join(f"{p.id} ({p.stale_reason})" for p in stale))
    return lines


@room.command("brief")
@root_option
@click.argument("question")
@click.option("--budget", type=click.IntRange(min=1), help="Page budget B (default 12).")
@click.option("--json", "as_json", is_flag=True, help="Print the brief as JSON.")
def brief_cmd(root: str | None, question: str, budget: int | None, as_json: bool) -> None:
    """The Tier-A brief: candidate pages within B, why each, stale flags."""
    from tether.cli.wiki_context import load_context
    from tether.room.brief import make_brief

    ctx = load_context(root)
    index, _ = ctx.fresh_index()
    with index:
        brief = make_brief(index, question, _budget(ctx.settings.room_budget, budget))
    _print_notes(brief)
    if as_json:
        from tether.cli.render import print_json

        print_json(brief.to_dict())
        return
    _print_brief(brief)


@room.command("open")
@root_option
@click.argument("question")
@click.option("--budget", type=click.IntRange(min=1), help="Page budget B (default 12).")
@click.option("--profile", metavar="NAME", help="Profile for the room's run.")
@click.option("--timeout", type=float, metavar="SECONDS", help="Wall-clock cap of the room.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def open_cmd(
    root: str | None,
    question: str,
    budget: int | None,
    profile: str | None,
    timeout: float | None,
    as_json: bool,
) -> None:
    """Open exactly one room for QUESTION and return its checked conclusion."""
    from tether.cli.wiki_context import load_context
    from tether.room.ask import open_for, refuse_early, result_error
    from tether.room.brief import make_brief
    from tether.room.room import STATUS_READ_DIRECTLY, refuse_nesting
    from tether.runs.sandboxing import refuse_nested

    refuse_nesting(os.environ)
    refuse_nested(os.environ, "`room open`")  # a room's run inside a run: refused first
    ctx = load_context(root)
    refuse_early(ctx.wiki, ctx.home, os.environ)
    index, _ = ctx.fresh_index()
    with index:
        brief = make_brief(index, question, _budget(ctx.settings.room_budget, budget))
    _print_notes(brief)
    result = open_for(
        ctx.wiki,
        ctx.home,
        brief,
        os.environ,
        profile=profile or ctx.settings.room_profile,
        timeout=timeout,
    )
    if as_json:
        from tether.cli.render import print_json

        print_json(result.to_dict())
    elif result.status == STATUS_READ_DIRECTLY:
        _print_brief(brief)
    else:
        _print_result(result)
    error = result_error(result)
    if error is not None:
        raise error


def _print_result(result: RoomResult) -> None:
    reads = result.summary
    used, budget = (reads.used, reads.budget) if reads is not None else (0, None)
    click.echo(
        f"room {result.room_id}: {result.status} — read {used} of "
        f"{budget} pages; run {result.run.get('run_id')} "
        f"({result.run.get('stop')})"
    )
    if reads is not None and reads.refused_budget:
        click.echo(f"  budget reached, not read: {', '.join(reads.refused_budget)}")
    if reads is not None and reads.missing:
        click.echo(f"  missing: {', '.join(reads.missing)}")
    brief = result.brief
    click.echo(f"  pages (B={brief.budget}): " + ", ".join(p.id for p in brief.pages))
    _print_cut(brief)
    if reads is not None and reads.refused_tools:
        click.echo(f"  refused tool calls: {'; '.join(reads.refused_tools)}")
    if result.status == "b01":
        click.echo(
            "  B01: decide here — use this conclusion as it is, or read the few "
            "missing pages directly (no second room)."
        )
    check = result.check
    if check and check.violations:
        click.echo("  the conclusion failed the check:")
        for v in check.violations:
            click.echo(f"    {v}")
    if result.conclusion:
        click.echo("")
        click.echo(result.conclusion.rstrip("\n"))


@room.command("conclude")
@click.argument("source", metavar="FILE|-")
def conclude_cmd(source: str) -> None:
    """Inside a room: record the room's conclusion (from FILE, or - for stdin)."""
    from tether.room.state import Room

    current = Room.from_env()
    if current is None:
        raise UsageError("`room conclude` works only inside a room (TETHER_ROOM_DIR is not set)")
    if source == "-":
        text = sys.stdin.read()
    else:
        try:
            text = Path(source).read_text("utf-8")
        except OSError as exc:
            raise UsageError(f"cannot read the conclusion {source}: {exc.strerror}") from None
    current.write_conclusion(text)
    click.echo(f"conclusion recorded for room {current.id} ({len(text.split())} words)")


@room.command("check")
@click.argument("conclusion", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--room", "room_id", metavar="ID", help="The room (default: this room, or the newest one)."
)
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON.")
def check_cmd(conclusion: Path, room_id: str | None, as_json: bool) -> None:
    """Check a conclusion: <= 500 words, cited claims, pages really read, stale flags,
    the budget and missing lines. Exits 40 with the violations."""
    from tether.config import load_config
    from tether.room.conclusion_check import check_conclusion
    from tether.room.state import Room

    current = Room.from_env() if room_id is None else None
    if current is None:
        current = Room.find(load_config().home, room_id)
    try:
        text = conclusion.read_text("utf-8")
    except OSError as exc:
        raise UsageError(f"cannot read {conclusion}: {exc.strerror}") from None
    result = check_conclusion(text, current)
    if as_json:
        from tether.cli.render import print_json

        print_json({"room": current.id, **result.to_dict()})
    else:
        for v in result.violations:
            click.echo(
                f"{conclusion}:{v.line}: {v.message}" if v.line else f"{conclusion}: {v.message}"
            )
        state = "passes" if result.ok else f"fails ({len(result.violations)} violations)"
        click.echo(
            f"conclusion {state}: {result.words} words, cites "
            f"{', '.join(result.cited) or 'nothing'} (room {current.id})"
        )
    if not result.ok:
        raise CheckFailedError("the conclusion failed the room check")
