"""A person decides: approve (tether carries out exactly the pinned step) or reject.

Both are a person's actions: refused (exit 30) inside an agent's process tree
(``tether.human_only``). Inside the sandbox they could not write anyway: the
store is read-only there. Approving checks first that the step is still what
was proposed (a push: the ref still names the pinned commit, the remote still
points where it did) and refuses otherwise (exit 41, nothing done); then it
marks the proposal ``approved`` in one guarded write (a second approver gets
exit 41), runs the argv without a shell in the person's own environment, and
records ``done`` or ``failed`` with the exit status and the output's tail.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from tether.human_only import refuse_inside_agent, who
from tether.outbox import git, proposal_store
from tether.outbox.actions import PUSH
from tether.outbox.errors import ProposalInputError, ProposalStopError
from tether.outbox.model import APPROVED, DONE, FAILED, PROPOSED, REJECTED, Proposal

OUTPUT_TAIL = 16 * 1024  # characters of the step's output kept in the store
MAX_REASON = 2000


@dataclass(frozen=True)
class Carried:
    """An approved proposal after its step ran."""

    proposal: Proposal
    output: str  # all of it, for the terminal; the store keeps the tail

    @property
    def ok(self) -> bool:
        return self.proposal.state == DONE


def _now() -> str:
    return datetime.now(UTC).isoformat()


def _undecided(conn: sqlite3.Connection, proposal_id: str) -> Proposal:
    proposal = proposal_store.get(conn, proposal_id)
    if proposal.state != PROPOSED:
        raise ProposalStopError(_decided_text(proposal))
    return proposal


def _decided_text(proposal: Proposal) -> str:
    verb = "rejected" if proposal.state == REJECTED else "approved"
    by = f" by {proposal.decided_by}" if proposal.decided_by else ""
    at = f" at {proposal.decided_at}" if proposal.decided_at else ""
    return f"{proposal.id} is already {proposal.state} ({verb}{by}{at}); nothing was carried out"


def check_pinned(proposal: Proposal) -> None:
    """Refuse (exit 41) when the step is no longer what was proposed."""
    if proposal.kind != PUSH or proposal.pinned is None:
        return
    pinned = proposal.pinned
    root = Path(proposal.cwd)
    now = git.commit_of(root, str(pinned["src"]))
    if now != pinned["commit"]:
        names = f"now names {now[:12]}" if now else "names no commit now"
        raise ProposalStopError(
            f"{proposal.id}: {pinned['src']} {names}, but the proposal pinned "
            f"{str(pinned['commit'])[:12]}; nothing was pushed. Reject it "
            f"(`tether outbox reject {proposal.id} --reason …`); a new run can propose again"
        )
    url = git.push_url(root, str(pinned["remote"]))
    if url != pinned["remote_url"]:
        raise ProposalStopError(
            f"{proposal.id}: remote {pinned['remote']} now pushes to {url!r}, not "
            f"{pinned['remote_url']!r} as when it was proposed; nothing was pushed"
        )


def approve(
    conn: sqlite3.Connection,
    proposal_id: str,
    *,
    note: str | None = None,
    env: Mapping[str, str] | None = None,
    by: str | None = None,
) -> Carried:
    """Carry out exactly the pinned step of a proposal a person approved."""
    environ = dict(os.environ if env is None else env)
    refuse_inside_agent("outbox approve", environ=environ)
    proposal = _undecided(conn, proposal_id)
    check_pinned(proposal)
    decided_by, decided_at = by or who(), _now()
    if not proposal_store.change_state(
        conn,
        proposal.id,
        was=PROPOSED,
        to=APPROVED,
        decided_by=decided_by,
        decided_at=decided_at,
        note=note,
    ):
        raise ProposalStopError(_decided_text(proposal_store.get(conn, proposal.id)))
    code, output = _run(proposal, environ)
    state = DONE if code == 0 else FAILED
    proposal_store.change_state(
        conn,
        proposal.id,
        was=APPROVED,
        to=state,
        exit_code=code,
        output=output[-OUTPUT_TAIL:],
        finished_at=_now(),
    )
    return Carried(proposal_store.get(conn, proposal.id), output)


def _run(proposal: Proposal, env: dict[str, str]) -> tuple[int, str]:
    timeout = _timeout(proposal)
    try:
        done = subprocess.run(
            proposal.argv,
            cwd=proposal.cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            timeout=timeout,
            check=False,
        )
    except FileNotFoundError:
        return 127, f"{proposal.argv[0]}: not found"
    except subprocess.TimeoutExpired as exc:
        out = exc.output.decode("utf-8", "replace") if isinstance(exc.output, bytes) else ""
        return 124, f"{out}\nstopped after {timeout:g} s (outbox.timeout)"
    except OSError as exc:
        return 126, f"{proposal.argv[0]}: {exc.strerror}"
    return done.returncode, done.stdout.decode("utf-8", "replace")


def _timeout(proposal: Proposal) -> float:
    from tether.config import load_config
    from tether.outbox.actions import kind_settings

    try:
        config = load_config(cwd=Path(proposal.project))
        settings, kind = kind_settings(config, proposal.kind)
    except Exception:
        return 600.0
    return (kind.timeout if kind is not None and kind.timeout else None) or settings.timeout


def reject(
    conn: sqlite3.Connection,
    proposal_id: str,
    *,
    reason: str,
    env: Mapping[str, str] | None = None,
    by: str | None = None,
) -> Proposal:
    """Record a person's rejection (with the reason the next run gets); nothing is carried out."""
    refuse_inside_agent("outbox reject", environ=env)
    if not reason.strip():
        raise ProposalInputError("--reason is empty; say why, the next run reads it")
    if len(reason) > MAX_REASON:
        raise ProposalInputError(f"--reason is longer than {MAX_REASON} characters")
    proposal = _undecided(conn, proposal_id)
    if not proposal_store.change_state(
        conn,
        proposal.id,
        was=PROPOSED,
        to=REJECTED,
        decided_by=by or who(),
        decided_at=_now(),
        note=reason.strip(),
    ):
        raise ProposalStopError(_decided_text(proposal_store.get(conn, proposal.id)))
    return proposal_store.get(conn, proposal.id)
