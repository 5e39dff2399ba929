"""The loop and the outbox: a unit that ended with proposals waits for a person's decision.

A ticket whose run left pending proposals goes to ``USER/approval``, naming
them (front matter ``proposals``: their ids). When a person has decided the
last of them (``tether outbox approve`` / ``reject``, or the dashboard),
``settle`` moves the ticket on:

- every one approved and carried out: ``DONE`` — or back to ``ACTIONABLE``
  when the ticket says more work follows (front matter ``after_approval:
  continue``) or the run that proposed did not complete;
- one rejected, or its approved step failed: back to ``ACTIONABLE``, with the
  reason (or the failure's output) in front matter ``outbox_feedback``, which
  the next run's prompt carries.

A ticket a person moved out of ``USER/approval`` meanwhile only gets a note.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tether.board import Board, State, Ticket, TicketNotFoundError
from tether.config import load_config
from tether.human_only import refuse_inside_agent
from tether.outbox import APPROVED, DONE, FAILED, REJECTED, Carried, Proposal
from tether.outbox import approve as carry_out
from tether.outbox import reject as turn_down
from tether.outbox.proposal_store import get as get_proposal
from tether.outbox.proposal_store import of_ticket
from tether.run_status import RunStatus
from tether.store import state_db
from tether.store.runs import get_run

PROPOSALS = "proposals"  # front matter: the ids a ticket in USER/approval waits for
AFTER_APPROVAL = "after_approval"  # front matter: "continue" when more work follows
FEEDBACK = "outbox_feedback"  # front matter: what a person said to the last proposals
CONTINUE = "continue"
FEEDBACK_OUTPUT = 1500  # characters of a failed step's output the next run reads


def commands_for(proposal_id: str) -> str:
    return (
        f"`tether outbox approve {proposal_id}` or `tether outbox reject {proposal_id} --reason …`"
    )


def needs_text(pending: list[Proposal]) -> str:
    """The ``needs`` of a ticket waiting for its proposals."""
    listed = "; ".join(f"{p.id}: {p.headline}" for p in pending)
    how = (
        commands_for(pending[0].id)
        if len(pending) == 1
        else ("`tether outbox approve ID` or `tether outbox reject ID --reason …` for each")
    )
    noun = "proposal" if len(pending) == 1 else "proposals"
    return f"a person's decision on its {noun} ({listed}): {how}"


def parking_front(pending: list[Proposal]) -> dict[str, Any]:
    """Front matter of a ticket that goes to USER/approval for ``pending``."""
    return {"needs": needs_text(pending), PROPOSALS: [p.id for p in pending], FEEDBACK: None}


@dataclass(frozen=True)
class Decided:
    """A person's decision on a proposal, and what it did to the proposal's ticket."""

    proposal: Proposal
    output: str  # what the approved step printed ("" for a rejection)
    ticket_line: str | None  # e.g. "T-… → DONE", None when no ticket moved or was noted

    @property
    def ok(self) -> bool:
        return self.proposal.state in (DONE, REJECTED)


def approve(
    proposal_id: str,
    *,
    note: str | None = None,
    env: Mapping[str, str] | None = None,
    by: str | None = None,
    cwd: Path | None = None,
) -> Decided:
    """``tether outbox approve``: carry out the pinned step, then move its ticket on."""
    environ = dict(os.environ if env is None else env)
    # first of all: inside a run the store is read-only, and no agent decides anyway
    refuse_inside_agent("outbox approve", environ=environ)
    config = load_config(env=environ, cwd=cwd)
    conn = state_db.connect(config.home)
    try:
        carried: Carried = carry_out(conn, proposal_id, note=note, env=environ, by=by)
        return Decided(carried.proposal, carried.output, settle(conn, carried.proposal, environ))
    finally:
        conn.close()


def reject(
    proposal_id: str,
    *,
    reason: str,
    env: Mapping[str, str] | None = None,
    by: str | None = None,
    cwd: Path | None = None,
) -> Decided:
    """``tether outbox reject``: record the reason, then send its ticket back."""
    environ = dict(os.environ if env is None else env)
    refuse_inside_agent("outbox reject", environ=environ)
    config = load_config(env=environ, cwd=cwd)
    conn = state_db.connect(config.home)
    try:
        proposal = turn_down(conn, proposal_id, reason=reason, env=environ, by=by)
        return Decided(proposal, "", settle(conn, proposal, environ))
    finally:
        conn.close()


def _board(proposal: Proposal, env: Mapping[str, str]) -> Board | None:
    from tether.core.session_stamp import stamp
    from tether.loop.context import board_of

    try:
        config = load_config(env=dict(env), cwd=Path(proposal.project))
    except Exception:  # the project moved or its configuration broke: no ticket to move
        return None
    board = board_of(config)
    board.stamp = lambda: stamp(env, "tether-outbox")
    return board


def settle(conn: sqlite3.Connection, decided: Proposal, env: Mapping[str, str]) -> str | None:
    """Move the decided proposal's ticket on once none of its batch waits any more."""
    if decided.ticket is None:
        return None
    board = _board(decided, env)
    if board is None:
        return None
    try:
        ticket = board.get(decided.ticket)
    except TicketNotFoundError:
        return None
    batch = _batch(conn, ticket, decided)
    # approved but not carried out to the end (interrupted): still waiting, like a pending one
    pending = [p for p in batch if p.pending or p.state == APPROVED]
    said = _decision_note(decided)
    waiting_here = ticket.state is State.USER and ticket.reason == "approval"
    if pending or not waiting_here:
        rest = f"; still waiting: {', '.join(p.id for p in pending)}" if pending else ""
        board.update(ticket.id, note=said + rest)
        return (
            f"{ticket.id} still waits for {', '.join(p.id for p in pending)}" if pending else None
        )
    turned_down = [p for p in batch if p.state in (REJECTED, FAILED)]
    clear = {"needs": None, PROPOSALS: None}
    if turned_down:
        feedback = [_feedback(p) for p in turned_down]
        board.move(ticket.id, State.ACTIONABLE, note=said, front={**clear, FEEDBACK: feedback})
        return f"{ticket.id} → ACTIONABLE (the next run gets the person's answer)"
    if ticket.front.get(AFTER_APPROVAL) == CONTINUE or not _run_completed(conn, decided):
        board.move(ticket.id, State.ACTIONABLE, note=said, front={**clear, FEEDBACK: None})
        return f"{ticket.id} → ACTIONABLE (more work follows)"
    board.move(ticket.id, State.DONE, note=said, front={**clear, FEEDBACK: None, "report": None})
    return f"{ticket.id} → DONE"


def _batch(conn: sqlite3.Connection, ticket: Ticket, decided: Proposal) -> list[Proposal]:
    """The proposals the ticket waits for (its ``proposals`` key), the decided one included."""
    named = ticket.front.get(PROPOSALS)
    ids = [str(i) for i in named] if isinstance(named, list) else []
    known = {p.id: p for p in of_ticket(conn, ticket.id)}
    batch = [known[i] for i in ids if i in known]
    if decided.id not in {p.id for p in batch}:
        batch.append(get_proposal(conn, decided.id))
    return batch


def _run_completed(conn: sqlite3.Connection, proposal: Proposal) -> bool:
    if proposal.run_id is None:
        return True
    try:
        return get_run(conn, proposal.run_id).status == RunStatus.COMPLETED
    except Exception:
        return True


def _decision_note(proposal: Proposal) -> str:
    """A note for the ticket's text; it names the proposal by id and kind only, so the
    words of the step (`push … main`) do not become ticket text the policy reads later."""
    who = proposal.decided_by or "a person"
    if proposal.state == REJECTED:
        return f"proposal {proposal.id} ({proposal.kind}) rejected by {who}: {proposal.note}"
    outcome = "carried out" if proposal.state == DONE else f"failed (exit {proposal.exit_code})"
    said = f": {proposal.note}" if proposal.note else ""
    return f"proposal {proposal.id} ({proposal.kind}) approved by {who}{said}; {outcome}"


def _feedback(proposal: Proposal) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "proposal": proposal.id,
        "what": proposal.headline,
        "state": proposal.state,
        "by": proposal.decided_by,
    }
    if proposal.state == REJECTED:
        entry["reason"] = proposal.note
    else:
        entry["exit_code"] = proposal.exit_code
        entry["output"] = (proposal.output or "")[-FEEDBACK_OUTPUT:]
    return entry
