"""One proposal as ``tether.db`` keeps it (table ``outbox``), and its states."""

from __future__ import annotations

import json
import os
import sqlite3
from dataclasses import asdict, dataclass
from typing import Any

PROPOSED = "proposed"
APPROVED = "approved"  # a person approved it; being carried out (or interrupted while it was)
REJECTED = "rejected"
DONE = "done"
FAILED = "failed"
STATES = (PROPOSED, APPROVED, REJECTED, DONE, FAILED)
DECIDED = (APPROVED, REJECTED, DONE, FAILED)

ID_PREFIX = "p-"


def new_proposal_id() -> str:
    """``p-3fa9c1d2``: short enough to type, random enough not to collide in one home."""
    # os.urandom(n).hex() is what secrets.token_hex(n) returns; every run's collection
    # imports this module, and secrets would load random, base64 and hmac with it
    return f"{ID_PREFIX}{os.urandom(4).hex()}"


def is_proposal_id(text: str) -> bool:
    rest = text.removeprefix(ID_PREFIX)
    return (
        text.startswith(ID_PREFIX) and len(rest) == 8 and all(c in "0123456789abcdef" for c in rest)
    )


@dataclass(frozen=True)
class Proposal:
    id: str
    kind: str
    state: str
    run_id: str | None
    unit: str | None
    ticket: str | None
    project: str  # the project root of the run that proposed it
    cwd: str  # where the step runs (a push: the repository's top folder)
    headline: str  # one line: what approving does
    params: dict[str, str]
    argv: list[str]  # exactly what approving runs
    pinned: dict[str, Any] | None  # a push: commit, src, dst, remote, remote_url, commits
    summary: str | None  # the diff summary
    report: str | None  # the run's report (its path), else the agent's last message
    message: str | None  # what the agent said with the proposal
    proposed_at: str
    collected_at: str
    decided_by: str | None = None
    decided_at: str | None = None
    note: str | None = None  # the approval's note or the rejection's reason
    exit_code: int | None = None
    output: str | None = None  # the tail of what the approved step printed
    finished_at: str | None = None

    @property
    def pending(self) -> bool:
        return self.state == PROPOSED

    def as_dict(self) -> dict[str, Any]:
        """The JSON of ``tether outbox list --json`` / ``show --json`` (``run`` = the run id)."""
        data = asdict(self)
        data["run"] = data.pop("run_id")
        return data


COLUMNS = tuple(Proposal.__dataclass_fields__)
_JSON = frozenset({"params", "argv", "pinned"})


def encode(proposal: Proposal) -> tuple[Any, ...]:
    values = asdict(proposal)
    return tuple(
        json.dumps(values[c]) if c in _JSON and values[c] is not None else values[c]
        for c in COLUMNS
    )


def decode(row: sqlite3.Row | tuple[Any, ...]) -> Proposal:
    values = dict(zip(COLUMNS, row, strict=True))
    for column in _JSON:
        if values[column] is not None:
            values[column] = json.loads(values[column])
    return Proposal(**values)
