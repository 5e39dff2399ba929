"""Inside a run: write a proposal where the sandbox lets the run write, and nothing else.

``TETHER_OUTBOX_DIR`` names the run's outbox folder (the supervisor creates it
before the agent starts; the sandbox binds it writable). Proposing reads
``tether.toml`` and asks git read-only questions; it never opens ``tether.db``
and writes nothing in the tether home but that folder. The file holds only
what the supervisor re-checks when it collects it after the run: the kind, the
named parameters and, for a push, the commit pinned now.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from tether.config import Config
from tether.fs import atomic_write_text
from tether.outbox.actions import (
    PUSH,
    Action,
    PushRequest,
    configured_action,
    kind_settings,
    parse_params,
    push_action,
)
from tether.outbox.errors import NotInsideRunError, ProposalInputError
from tether.outbox.folder import FILE_SUFFIX, MAX_MESSAGE, MAX_PER_RUN, OUTBOX_ENV
from tether.outbox.model import new_proposal_id


@dataclass(frozen=True)
class Proposed:
    id: str
    path: Path
    action: Action


def outbox_dir(env: Mapping[str, str]) -> Path:
    folder = env.get(OUTBOX_ENV)
    if not folder:
        raise NotInsideRunError(
            f"`tether outbox propose` works inside a run tether started ({OUTBOX_ENV} is not "
            f"set); outside a run, a person does the step themselves"
        )
    path = Path(folder)
    if not path.is_dir():
        raise NotInsideRunError(f"{OUTBOX_ENV}={folder} is not a folder; this run has no outbox")
    return path


@dataclass(frozen=True)
class ProposalRequest:
    """What the agent asked for on the command line, not yet checked."""

    kind: str
    args: Sequence[str] = ()  # NAME=VALUE words of a project's kind
    remote: str | None = None  # push only
    ref: str | None = None  # push only: SRC[:DST]
    message: str | None = None


def _action(config: Config, request: ProposalRequest, here: Path) -> Action:
    """The step the request names, checked (bad input raises; nothing is written)."""
    kind_settings(config, request.kind)  # an unknown kind: exit 3 before anything else
    if request.kind == PUSH:
        if request.args:
            raise ProposalInputError(
                f"push takes --remote and --ref, not {request.args[0]!r}: "
                f"tether outbox propose push [--remote NAME] [--ref SRC:DST]"
            )
        return push_action(config, here, PushRequest.parse(request.remote, request.ref))
    if request.remote is not None or request.ref is not None:
        raise ProposalInputError("--remote and --ref belong to push; give KEY=VALUE words")
    return configured_action(config, request.kind, parse_params(request.args))


def propose(
    config: Config,
    request: ProposalRequest,
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> Proposed:
    """Check the proposal now (bad input: one error, nothing written) and write its file."""
    folder = outbox_dir(os.environ if env is None else env)
    here = (cwd or Path.cwd()).resolve()
    action = _action(config, request, here)
    message = request.message
    if message is not None and len(message) > MAX_MESSAGE:
        raise ProposalInputError(f"--message is longer than {MAX_MESSAGE} characters")
    if len(list(folder.glob(f"*{FILE_SUFFIX}"))) >= MAX_PER_RUN:
        raise ProposalInputError(f"this run has proposed {MAX_PER_RUN} steps already; no more")
    proposal_id = new_proposal_id()
    record = {
        "version": 1,
        "id": proposal_id,
        "kind": action.kind,
        "params": action.params,
        "commit": action.pinned["commit"] if action.pinned else None,
        "cwd": str(here),
        "message": message,
        "proposed_at": datetime.now(UTC).isoformat(),
    }
    path = folder / f"{proposal_id}{FILE_SUFFIX}"
    atomic_write_text(path, json.dumps(record, indent=2) + "\n")
    return Proposed(proposal_id, path, action)
