"""``tether board``: the ticket board (add, show, list, move, approve, triage, import, export)."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from tether.cli.render import print_json

if TYPE_CHECKING:
    from tether.board import Board, Ticket

F = TypeVar("F", bound=Callable[..., Any])


def _board(path: Path | None) -> Board:
    from tether.loop.project_board import project_board

    return project_board(path)


def board_option(func: F) -> F:
    return click.option(
        "--board",
        "board_path",
        type=click.Path(path_type=Path, file_okay=False),
        help="The ticket folder (default: [loop] board, else <project root>/tickets).",
    )(func)


def json_option(func: F) -> F:
    return click.option("--json", "as_json", is_flag=True, help="Print JSON.")(func)


def state_key_options(func: F) -> F:
    """Options for the keys a state needs (BLOCKED, WAITING, USER)."""
    options = [
        click.option("--blocked-by", help="BLOCKED: what blocks the ticket."),
        click.option(
            "--check",
            "check_text",
            help="BLOCKED: a ticket id that must be DONE, or a command (split like a shell "
            "would, run without one) whose exit 0 proves the blocker gone.",
        ),
        click.option("--until", "until_text", help="WAITING/PARKED: a date, YYYY-MM-DD."),
        click.option(
            "--marker", help="WAITING/PARKED: a path (from the project root) that releases it."
        ),
        click.option("--needs", help="USER: what the user must give."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def state_front(
    blocked_by: str | None,
    check_text: str | None,
    until_text: str | None,
    marker: str | None,
    needs: str | None,
) -> dict[str, Any]:
    """The front matter keys a state needs, from their texts (the flags, or board_add's
    arguments)."""
    from tether.board import BoardError, is_ticket_id

    front: dict[str, Any] = {}
    if blocked_by:
        front["blocked_by"] = blocked_by
    if check_text:
        try:
            front["check"] = check_text if is_ticket_id(check_text) else shlex.split(check_text)
        except ValueError as exc:
            raise BoardError(f"--check {check_text!r}: {exc}") from None
    if until_text:
        try:
            front["until"] = date.fromisoformat(until_text)
        except ValueError:
            raise BoardError(f"--until {until_text!r} is not a date (YYYY-MM-DD).") from None
    if marker:
        front["marker"] = marker
    if needs:
        front["needs"] = needs
    return front


def _done(ticket: Ticket, as_json: bool, verb: str) -> None:
    if as_json:
        print_json(ticket.to_json())
    else:
        click.echo(f"{verb} {ticket.id} in {ticket.location}: {ticket.path}")


@click.group()
def board() -> None:
    """The ticket board: Markdown tickets in state folders (INBOX, ACTIONABLE, ... DONE)."""


@board.command("init")
@board_option
def init(board_path: Path | None) -> None:
    """Create the state folders (and reason folders) of the board."""
    target = _board(board_path)
    target.ensure()
    click.echo(f"board ready: {target.root}")


@board.command("add")
@click.argument("title")
@click.option("--priority", "-p", default="P2", show_default=True, help="P1, P2 or P3.")
@click.option("--body", default="", help="The ticket's Markdown text.")
@click.option(
    "--body-file",
    type=click.File("r", encoding="utf-8"),
    help="Read the body from a file (- = stdin).",
)
@click.option(
    "--state", "state_text", default="INBOX", show_default=True, help="STATE or STATE/reason."
)
@state_key_options
@board_option
@json_option
def add(
    title: str,
    priority: str,
    body: str,
    body_file: Any,
    state_text: str,
    board_path: Path | None,
    as_json: bool,
    **keys: Any,
) -> None:
    """Add a ticket (to INBOX unless --state says otherwise)."""
    from tether.board import parse_state

    state, reason = parse_state(state_text)
    text = body_file.read() if body_file is not None else body
    ticket = _board(board_path).add(
        title, priority=priority, body=text, state=state, reason=reason, front=state_front(**keys)
    )
    _done(ticket, as_json, "added")


@board.command("show")
@click.argument("ticket_id")
@board_option
@json_option
def show(ticket_id: str, board_path: Path | None, as_json: bool) -> None:
    """Show one ticket (its file, or --json)."""
    ticket = _board(board_path).get(ticket_id)
    if as_json:
        print_json(ticket.to_json())
        return
    click.echo(f"# {ticket.location}: {ticket.path}")
    click.echo(ticket.path.read_text(encoding="utf-8"), nl=False)


@board.command("list")
@click.option("--state", "state_text", help="Only this STATE or STATE/reason.")
@board_option
@json_option
def list_(state_text: str | None, board_path: Path | None, as_json: bool) -> None:
    """List tickets, untriaged INBOX notes, and malformed files (with what is wrong)."""
    from tether.loop.project_board import listed, listing

    target = _board(board_path)
    view, tickets = listed(target, state_text)
    if as_json:
        print_json(listing(target, view, tickets))
        return
    if not target.root.is_dir():
        click.echo(f"no board at {target.root} yet; `tether board add` or `init` creates it.")
        return
    # One line per ticket, never wrapped or cut, so ids can be copied and grepped.
    width = max((len(t.location) for t in tickets), default=5)
    for t in tickets:
        click.echo(f"{t.id}  {t.location:<{width}}  {t.priority}  {t.created:%Y-%m-%d}  {t.title}")
    for path in view.informal:
        click.echo(f"untriaged note: {path}")
    for path, message in view.malformed:
        click.echo(f"malformed: {path}: {message}", err=True)


@board.command("move")
@click.argument("ticket_id")
@click.argument("state_text", metavar="STATE[/REASON]")
@click.option("--note", help="A line to append to the ticket (dated).")
@state_key_options
@board_option
@json_option
def move(
    ticket_id: str,
    state_text: str,
    note: str | None,
    board_path: Path | None,
    as_json: bool,
    **keys: Any,
) -> None:
    """Move a ticket to another state (one atomic rename)."""
    from tether.board import parse_state

    state, reason = parse_state(state_text)
    ticket = _board(board_path).move(ticket_id, state, reason, note=note, front=state_front(**keys))
    _done(ticket, as_json, "moved")


@board.command("approve")
@click.argument("ticket_id")
@click.option("--note", help="What the approval covers (recorded with it).")
@board_option
@json_option
def approve(ticket_id: str, note: str | None, board_path: Path | None, as_json: bool) -> None:
    """Approve a ticket's externally visible or irreversible step (a person only).

    Records who approved and when (front matter `approved`); a ticket waiting in
    USER/approval goes back to ACTIONABLE. Refused (exit 30) inside an agent's
    process tree.
    """
    from tether.loop.autonomy import approve as record

    current = _board(board_path)
    ticket = record(current, ticket_id, note=note, clock=current.clock)
    _done(ticket, as_json, "approved")


@board.command("triage")
@click.argument("entry", required=False)
@click.option("--title", help="The ticket title (default: the note's first line).")
@click.option("--priority", "-p", help="P1, P2 or P3 (default: P2, or the ticket's own).")
@click.option(
    "--state", "state_text", default="ACTIONABLE", show_default=True, help="STATE or STATE/reason."
)
@state_key_options
@board_option
@json_option
def triage(
    entry: str | None,
    title: str | None,
    priority: str | None,
    state_text: str,
    board_path: Path | None,
    as_json: bool,
    **keys: Any,
) -> None:
    """Turn an INBOX entry (a note's path or a ticket id) into a ticket; no ENTRY lists them."""
    from tether.board import is_ticket_id, parse_state

    target = _board(board_path)
    if entry is None:
        pending = [str(p) for p in target.load().untriaged()]
        if as_json:
            print_json({"untriaged": pending})
        else:
            click.echo("\n".join(pending) if pending else "INBOX is empty: nothing to triage.")
        return
    state, reason = parse_state(state_text)
    path = target.get(entry).path if is_ticket_id(entry) else Path(entry).absolute()
    ticket = target.triage(
        path, title=title, priority=priority, state=state, reason=reason, front=state_front(**keys)
    )
    _done(ticket, as_json, "triaged")


@board.command("import")
@click.option("--from", "fmt", type=click.Choice(["beads", "backlog"]), required=True)
@click.argument("path", type=click.Path(path_type=Path, exists=True))
@board_option
@json_option
def import_(fmt: str, path: Path, board_path: Path | None, as_json: bool) -> None:
    """Import beads' issues.jsonl or a Backlog.md folder (again = only the changes)."""
    from tether.board.interop import import_from

    result = import_from(_board(board_path), fmt, path)
    if as_json:
        print_json(result.to_json())
        return
    click.echo(
        f"imported from {result.source}: {len(result.created)} created, "
        f"{len(result.updated)} updated, {len(result.unchanged)} unchanged, "
        f"{len(result.skipped)} skipped"
    )
    for source_id, why in result.skipped:
        click.echo(f"skipped {source_id}: {why}", err=True)


@board.command("export")
@click.option("--to", "fmt", type=click.Choice(["beads", "backlog"]), required=True)
@click.argument("path", type=click.Path(path_type=Path))
@board_option
@json_option
def export(fmt: str, path: Path, board_path: Path | None, as_json: bool) -> None:
    """Export the board to beads' issues.jsonl or a Backlog.md folder (others' items kept)."""
    from tether.board.interop import export_to

    result = export_to(_board(board_path), fmt, path)
    if as_json:
        print_json(result.to_json())
        return
    click.echo(
        f"exported to {result.target}: {len(result.written)} written, "
        f"{len(result.unchanged)} unchanged"
    )


__all__ = ["board"]
