"""``tether outbox``: propose an external step inside a run; a person approves or rejects it."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from tether.cli.render import print_json, print_table

if TYPE_CHECKING:
    from tether.outbox import Proposal

STATES = ("proposed", "approved", "rejected", "done", "failed")


@click.group()
def outbox() -> None:
    """Steps visible outside the work tree: a run proposes them, a person approves or rejects.

    Inside a run, `tether outbox propose` writes a proposal into the run's outbox
    folder; tether collects it when the run ends. Outside every agent, a person
    lists, shows, approves (tether carries out exactly the pinned step) or
    rejects (the reason goes to the next run).
    """


@outbox.command(
    "propose",
    context_settings={"ignore_unknown_options": False, "allow_interspersed_args": True},
)
@click.argument("kind")
@click.argument("params", nargs=-1)
@click.option("--remote", help="push: the remote (default: the branch's upstream, else origin).")
@click.option("--ref", help="push: SRC[:DST] (default: the current branch to the same name).")
@click.option("--message", "-m", help="What the step is for, shown to the person who decides.")
@click.option("--json", "as_json", is_flag=True)
def propose(
    kind: str,
    params: tuple[str, ...],
    remote: str | None,
    ref: str | None,
    message: str | None,
    as_json: bool,
) -> None:
    """Propose an external step from inside a run: `push` or a kind from [outbox.kinds].

    PARAMS are NAME=VALUE words for a project's kind. The step is checked now
    (an unknown kind: exit 3; a parameter that fails its rule: exit 2) and
    written to the run's outbox folder ($TETHER_OUTBOX_DIR); nothing is carried
    out until a person approves it after the run.
    """
    from tether.config import load_config
    from tether.outbox import ProposalRequest
    from tether.outbox import propose as write

    request = ProposalRequest(kind, params, remote=remote, ref=ref, message=message)
    done = write(load_config(), request)
    if as_json:
        print_json(
            {
                "id": done.id,
                "kind": done.action.kind,
                "state": "proposed",
                "headline": done.action.headline,
                "argv": done.action.argv,
                "file": str(done.path),
            }
        )
        return
    click.echo(f"proposed {done.id}: {done.action.headline}")
    for note in done.action.notes:
        click.echo(f"note: {note}")
    click.echo(
        "nothing is carried out now: tether collects the proposal when this run ends and a "
        f"person decides (`tether outbox approve {done.id}`)"
    )


def _conn() -> object:
    from tether.config import load_config
    from tether.store import state_db

    return state_db.connect_reader(load_config().home)


def _listed(states: tuple[str, ...], limit: int) -> list[Proposal]:
    import sqlite3

    from tether.outbox.proposal_store import listing

    conn = _conn()
    if conn is None:
        return []
    assert isinstance(conn, sqlite3.Connection)
    try:
        return listing(conn, states, limit)
    finally:
        conn.close()


@outbox.command("list")
@click.option(
    "--state",
    "states",
    multiple=True,
    type=click.Choice(STATES),
    help="Only proposals in this state (repeatable).",
)
@click.option("--limit", default=100, show_default=True, type=click.IntRange(min=1))
@click.option("--json", "as_json", is_flag=True)
def list_(states: tuple[str, ...], limit: int, as_json: bool) -> None:
    """List proposals, newest first: id, kind, state, run, ticket and what approving does."""
    found = _listed(states, limit)
    if as_json:
        print_json([p.as_dict() for p in found])
        return
    if not found:
        click.echo("no proposals" + (f" in state {', '.join(states)}" if states else ""))
        return
    print_table(
        None,
        ["id", "kind", "state", "run", "ticket", "what"],
        [(p.id, p.kind, p.state, p.run_id, p.ticket, p.headline) for p in found],
        whole=("id", "run", "ticket"),
    )


def _get(proposal_id: str) -> Proposal:
    import sqlite3

    from tether.outbox import ProposalNotFoundError
    from tether.outbox.proposal_store import get

    conn = _conn()
    if conn is None:
        raise ProposalNotFoundError(proposal_id)
    assert isinstance(conn, sqlite3.Connection)
    try:
        return get(conn, proposal_id)
    finally:
        conn.close()


@outbox.command("show")
@click.argument("proposal_id")
@click.option("--json", "as_json", is_flag=True)
def show(proposal_id: str, as_json: bool) -> None:
    """One proposal: what approving carries out, the pinned commits, the run and its report."""
    proposal = _get(proposal_id)
    if as_json:
        print_json(proposal.as_dict())
        return
    from tether.outbox.text import describe

    click.echo(describe(proposal))


@outbox.command("approve")
@click.argument("proposal_id")
@click.option("--note", help="What the approval covers (recorded with it).")
@click.option("--json", "as_json", is_flag=True)
def approve(proposal_id: str, note: str | None, as_json: bool) -> None:
    """Carry out exactly the proposed step, with your own credentials (a person only).

    Refused inside an agent's process tree (exit 30); refused when the step is no
    longer what was proposed — a push whose ref moved since (exit 41). The step's
    output is shown and recorded; the proposal ends `done` or `failed` (exit 41).
    Approving the last proposal a ticket waits for moves the ticket on.
    """
    from tether.loop.proposals import approve as decide
    from tether.outbox import ProposalStopError

    decided = decide(proposal_id, note=note)
    proposal = decided.proposal
    if as_json:
        print_json({**proposal.as_dict(), "ticket_moved": decided.ticket_line})
    else:
        if decided.output.strip():
            sys.stderr.write(
                decided.output if decided.output.endswith("\n") else decided.output + "\n"
            )
        click.echo(f"{proposal.id} {proposal.state}: {proposal.headline}")
        if decided.ticket_line:
            click.echo(decided.ticket_line)
    if not decided.ok:
        raise ProposalStopError(
            f"{proposal.id}: the approved step failed (exit {proposal.exit_code}); recorded as "
            f"failed, its output is above and in `tether outbox show {proposal.id}`"
        )


@outbox.command("reject")
@click.argument("proposal_id")
@click.option("--reason", required=True, help="Why; the ticket's next run reads it.")
@click.option("--json", "as_json", is_flag=True)
def reject(proposal_id: str, reason: str, as_json: bool) -> None:
    """Reject a proposal (a person only): nothing is carried out; the reason goes back."""
    from tether.loop.proposals import reject as decide

    decided = decide(proposal_id, reason=reason)
    if as_json:
        print_json({**decided.proposal.as_dict(), "ticket_moved": decided.ticket_line})
        return
    click.echo(f"{decided.proposal.id} rejected: {decided.proposal.headline}")
    if decided.ticket_line:
        click.echo(decided.ticket_line)
