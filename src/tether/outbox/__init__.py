"""The outbox: a run proposes an external step, a person approves it outside every sandbox.

Inside a run, ``propose`` writes a file into the run's outbox folder
(``TETHER_OUTBOX_DIR``). After the run, the supervisor ``collect``\\ s the files
into ``tether.db`` (checked again, nothing of the agent's file trusted). A
person ``approve``\\ s (tether carries out exactly the pinned step, with the
person's own environment) or ``reject``\\ s (the reason becomes the next run's
input). See docs/explanation/the-outbox.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tether.core.lazy_package import lazy_names

if TYPE_CHECKING:
    from tether.outbox.collect import Collected, RunFacts, collect, ticket_of
    from tether.outbox.decide import Carried, approve, check_pinned, reject
    from tether.outbox.errors import (
        NotInsideRunError,
        ProposalInputError,
        ProposalNotFoundError,
        ProposalStopError,
        UnknownKindError,
    )
    from tether.outbox.folder import OUTBOX_ENV
    from tether.outbox.model import (
        APPROVED,
        DONE,
        FAILED,
        PROPOSED,
        REJECTED,
        STATES,
        Proposal,
    )
    from tether.outbox.propose import ProposalRequest, Proposed, propose

# The names below load on first use: every run reads the outbox's folder variable
# and collects an outbox that is almost always empty; neither needs the checks,
# the git calls or the store of a proposal (tests/runs/test_run_lean.py).
lazy_names(
    __name__,
    {
        "Collected": "collect",
        "RunFacts": "collect",
        "collect": "collect",
        "ticket_of": "collect",
        "Carried": "decide",
        "approve": "decide",
        "check_pinned": "decide",
        "reject": "decide",
        "NotInsideRunError": "errors",
        "ProposalInputError": "errors",
        "ProposalNotFoundError": "errors",
        "ProposalStopError": "errors",
        "UnknownKindError": "errors",
        "APPROVED": "model",
        "DONE": "model",
        "FAILED": "model",
        "PROPOSED": "model",
        "REJECTED": "model",
        "STATES": "model",
        "Proposal": "model",
        "OUTBOX_ENV": "folder",
        "ProposalRequest": "propose",
        "Proposed": "propose",
        "propose": "propose",
    },
)

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
