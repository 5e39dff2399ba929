"""The outbox: a run proposes an external step, a person approves it outside every sandbox.

Inside a run, ``propose`` writes a file into the run's outbox folder
(``TETHER_OUTBOX_DIR``). After the run, the supervisor ``collect``\\ s the files
into ``tether.db`` (checked again, nothing of the agent's file trusted). A
person ``approve``\\ s (tether carries out exactly the pinned step, with the
person's own environment) or ``reject``\\ s (the reason becomes the next run's
input). See docs/explanation/the-outbox.md.
"""

from __future__ import annotations

from tether.outbox.collect import Collected, RunFacts, collect, ticket_of
from tether.outbox.decide import Carried, approve, check_pinned, reject
from tether.outbox.errors import (
    NotInsideRunError,
    ProposalInputError,
    ProposalNotFoundError,
    ProposalStopError,
    UnknownKindError,
)
from tether.outbox.model import (
    APPROVED,
    DONE,
    FAILED,
    PROPOSED,
    REJECTED,
    STATES,
    Proposal,
)
from tether.outbox.propose import OUTBOX_ENV, ProposalRequest, Proposed, propose

__all__ = [
    "APPROVED",
    "DONE",
    "FAILED",
    "OUTBOX_ENV",
    "PROPOSED",
    "REJECTED",
    "STATES",
    "Carried",
    "Collected",
    "NotInsideRunError",
    "Proposal",
    "ProposalInputError",
    "ProposalNotFoundError",
    "ProposalRequest",
    "ProposalStopError",
    "Proposed",
    "RunFacts",
    "UnknownKindError",
    "approve",
    "check_pinned",
    "collect",
    "propose",
    "reject",
    "ticket_of",
]
