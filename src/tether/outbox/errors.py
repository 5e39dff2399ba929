"""What can go wrong with a proposal, each with its exit code (docs/reference/exit-codes.md)."""

from __future__ import annotations

from tether.core.errors import TetherError, UnknownNameError, UsageError
from tether.core.exit_codes import ExitCode


class ProposalInputError(UsageError):
    """A proposal's arguments are not acceptable (a parameter fails its rule, a bad ref): exit 2."""


class NotInsideRunError(UsageError):
    """``tether outbox propose`` outside a run tether started (no ``TETHER_OUTBOX_DIR``)."""


class UnknownKindError(UnknownNameError):
    """A kind neither built in nor in ``[outbox.kinds]``: exit 3, like an unknown profile."""

    def __init__(self, name: str, known: list[str]) -> None:
        super().__init__(
            "outbox kind",
            name,
            known,
            f"Define it as [outbox.kinds.{name}] in tether.toml, or use one of these.",
        )


class ProposalNotFoundError(UsageError):
    """No proposal with this id: exit 2, like an unknown run id."""

    def __init__(self, proposal_id: str) -> None:
        super().__init__(
            f"no proposal {proposal_id!r}; `tether outbox list` shows the known proposals."
        )
        self.proposal_id = proposal_id


class ProposalStopError(TetherError):
    """A proposal a person cannot (or can no longer) carry out as pinned: exit 41, nothing done.

    Already decided, its pinned commits no longer what the ref would push, its remote
    changed, or the approved step itself failed (then it is recorded as ``failed``).
    """

    exit_code = ExitCode.HUMAN_STOP
