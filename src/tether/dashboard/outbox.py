"""The outbox on the dashboard: the proposals, and a person's approve or reject.

The two POST routes change state, so the guard (``security.Guard``) has checked
them before they run: the session cookie, an ``Origin`` equal to the
dashboard's own, and the session's CSRF token in ``X-CSRF-Token``. They then
call exactly what ``tether outbox approve``/``reject`` call
(``tether.loop.proposals``), in the dashboard's process — the person's own,
with their credentials — and the decision is recorded as the person's, "via
the dashboard". A dashboard started inside an agent's process tree refuses
(403), like the command line (exit 30).
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from tether.config import Config
from tether.core.errors import TetherError
from tether.core.exit_codes import ExitCode

LISTED = 200  # proposals the page shows, newest first
OUTPUT_SHOWN = 4000  # characters of an approved step's output in the answer
MAX_BODY = 8192  # bytes of a decision's JSON body

# a refused decision's HTTP status, by the exit code the command line would give
STATUS_OF_EXIT = {
    ExitCode.GATE_REFUSED: 403,
    ExitCode.USAGE: 400,
    ExitCode.CONFIG: 400,
    ExitCode.HUMAN_STOP: 409,
}


def proposals(conn: sqlite3.Connection | None) -> dict[str, Any]:
    """What the outbox page shows: the proposals, newest first, waiting ones counted."""
    from tether.outbox.proposal_store import listing

    found = listing(conn, (), LISTED) if conn is not None else []
    return {
        "waiting": sum(1 for p in found if p.pending),
        "proposals": [p.as_dict() for p in found],
    }


def parse_body(raw: bytes) -> dict[str, Any]:
    """The decision's JSON object (``note`` or ``reason``); bad input is a ``UsageError``."""
    from tether.core.errors import UsageError

    if len(raw) > MAX_BODY:
        raise UsageError(f"the request body is larger than {MAX_BODY} bytes")
    if not raw.strip():
        return {}
    try:
        body = json.loads(raw)
    except ValueError:
        raise UsageError("the request body is not JSON") from None
    if not isinstance(body, dict):
        raise UsageError("the request body is not a JSON object")
    return body


def decide(config: Config, proposal_id: str, action: str, body: dict[str, Any]) -> dict[str, Any]:
    """Approve or reject ``proposal_id`` as the person running the dashboard."""
    from tether.core.errors import UsageError
    from tether.human_only import who
    from tether.loop import proposals as flow

    by = f"{who()} via the dashboard"
    text = body.get("note") if action == "approve" else body.get("reason")
    if text is not None and not isinstance(text, str):
        raise UsageError(f"`{'note' if action == 'approve' else 'reason'}` must be text")
    if action == "approve":
        decided = flow.approve(proposal_id, note=text or None, by=by, cwd=config.project_root)
    elif action == "reject":
        decided = flow.reject(proposal_id, reason=text or "", by=by, cwd=config.project_root)
    else:
        raise UsageError(f"no action {action!r}: approve or reject")
    return {
        "proposal": decided.proposal.as_dict(),
        "ok": decided.ok,
        "ticket_moved": decided.ticket_line,
        "output": decided.output[-OUTPUT_SHOWN:],
    }


def refused(exc: TetherError) -> tuple[int, dict[str, Any]]:
    """A refused decision as the page shows it: an HTTP status and the one-line reason."""
    from tether.outbox import ProposalNotFoundError

    status = 404 if isinstance(exc, ProposalNotFoundError) else STATUS_OF_EXIT.get(exc.exit_code)
    return status or 500, {"error": str(exc), "exit_code": int(exc.exit_code)}
