"""The one rule for actions only a person may take: refused inside an agent's process tree.

Releasing an ingest entry, approving a ticket, approving or rejecting an outbox
proposal: each is a person's decision, so each refuses (exit 30) when the
process runs inside an agent's process tree (a variable an agent sets, or an
agent CLI among its ancestors, or the run's sandbox around it: the one test,
``tether.core.agent_tree.inside_agent``, which the gate's ``session new`` asks too).
This is a second belt: inside the sandbox the state these actions write is
read-only anyway.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from tether.core.agent_tree import inside_agent
from tether.core.errors import TetherError
from tether.core.exit_codes import ExitCode


class HumanOnlyError(TetherError):
    """A person's action attempted from inside an agent's process tree."""

    exit_code = ExitCode.GATE_REFUSED


def refuse_inside_agent(
    action: str,
    *,
    environ: Mapping[str, str] | None = None,
    error: type[TetherError] = HumanOnlyError,
) -> None:
    """Raise ``error`` (exit 30) when ``tether ACTION`` runs inside an agent's process tree."""
    inside = inside_agent(environ=environ)
    if inside is not None:
        raise error(
            f"refused: `tether {action}` is a human action and runs inside an agent's "
            f"process tree ({inside}). Run it yourself in a terminal, outside the agent."
        )


def who() -> str:
    """The person deciding, as recorded with the decision: ``user@host``."""
    # imported here: the loop and the stop hook import this module for the refusal
    # alone, at every tick; only a person's decision asks who made it
    import getpass
    import socket

    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = f"uid {os.getuid()}"
    return f"{user}@{socket.gethostname()}"
