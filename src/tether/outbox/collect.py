"""After a run: the supervisor turns the run's proposal files into rows of ``tether.db``.

The files were written by the agent, so nothing in them is taken on trust: the
kind must be known to the configuration, the parameters pass the kind's rules,
and the argv is derived again from the configuration (a push: from the pinned
commit, which must be in the repository). A file that fails is not collected;
it is renamed ``….refused`` and named in the result. A collected file is
renamed ``….collected``, so collecting the same folder again adds nothing.

The kinds' checks (``actions``, with its git calls) are imported only when a
file is found: every run collects its outbox, and almost every outbox is empty.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tether.config import Config
from tether.core.errors import TetherError
from tether.outbox.folder import FILE_SUFFIX, MAX_MESSAGE, MAX_PER_RUN

# A proposal's record and its store load only for a file found: every run collects its
# outbox, which is almost always empty (tests/runs/test_run_lean.py).
if TYPE_CHECKING:
    from tether.outbox.actions import Action
    from tether.outbox.model import Proposal

MAX_FILE_BYTES = 64 * 1024
TICKET_UNIT = "ticket:"


@dataclass(frozen=True)
class RunFacts:
    """What the supervisor knows of the run that proposed."""

    run_id: str
    unit: str | None
    cwd: Path  # the run's working folder
    report: str | None  # the report's path, else the agent's last message
    diff_summary: str | None  # what the run changed in the work tree


@dataclass
class Collected:
    proposals: list[Proposal] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # "<file>: why"

    @property
    def pending(self) -> list[str]:
        return [p.id for p in self.proposals if p.pending]


def collect(conn: sqlite3.Connection, config: Config, folder: Path, run: RunFacts) -> Collected:
    """Collect every proposal file in ``folder`` (the run's ``TETHER_OUTBOX_DIR``)."""
    result = Collected()
    try:
        files = sorted(folder.glob(f"*{FILE_SUFFIX}"), key=lambda p: (p.stat().st_mtime_ns, p.name))
    except OSError:
        return result
    from tether.outbox import proposal_store

    for number, path in enumerate(files):
        try:
            if number >= MAX_PER_RUN:
                raise _RefusedError(f"more than {MAX_PER_RUN} proposals in one run")
            proposal = _proposal(conn, config, path, run)
        except (_RefusedError, TetherError) as exc:
            result.refused.append(f"{path.name}: {exc}")
            _rename(path, ".refused")
            continue
        proposal_store.insert(conn, proposal)
        _rename(path, ".collected")
        result.proposals.append(proposal)
    return result


class _RefusedError(Exception):
    pass


def _proposal(conn: sqlite3.Connection, config: Config, path: Path, run: RunFacts) -> Proposal:
    record = _read(path)
    kind = record.get("kind")
    params = record.get("params")
    commit = record.get("commit")
    message = record.get("message")
    if not isinstance(kind, str) or not kind:
        raise _RefusedError("no kind")
    if not isinstance(params, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in params.items()
    ):
        raise _RefusedError("params is not a table of text values")
    if commit is not None and not isinstance(commit, str):
        raise _RefusedError("commit is not text")
    if message is not None and (not isinstance(message, str) or len(message) > MAX_MESSAGE):
        raise _RefusedError(f"message is not text of at most {MAX_MESSAGE} characters")
    from tether.outbox.actions import action_for  # checks and git: only for a file found
    from tether.outbox.model import PROPOSED, Proposal

    action = action_for(config, run.cwd, kind, params, commit)
    now = datetime.now(UTC).isoformat()
    proposed_at = record.get("proposed_at")
    return Proposal(
        id=_fresh_id(conn, record.get("id")),
        kind=action.kind,
        state=PROPOSED,
        run_id=run.run_id,
        unit=run.unit,
        ticket=ticket_of(run.unit),
        project=str(config.project_root),
        cwd=str(action.cwd),
        headline=action.headline,
        params=action.params,
        argv=action.argv,
        pinned=action.pinned,
        summary=_summary(action, run),
        report=run.report,
        message=message,
        proposed_at=proposed_at if isinstance(proposed_at, str) and proposed_at else now,
        collected_at=now,
    )


def ticket_of(unit: str | None) -> str | None:
    if unit and unit.startswith(TICKET_UNIT):
        return unit.removeprefix(TICKET_UNIT) or None
    return None


def _read(path: Path) -> dict[str, Any]:
    try:
        if path.is_symlink() or not path.is_file():
            raise _RefusedError("not a plain file")
        if path.stat().st_size > MAX_FILE_BYTES:
            raise _RefusedError(f"larger than {MAX_FILE_BYTES} bytes")
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise _RefusedError(f"cannot be read as a proposal ({exc})") from None
    if not isinstance(data, dict):
        raise _RefusedError("not a JSON object")
    return data


def _fresh_id(conn: sqlite3.Connection, given: Any) -> str:
    """The id the agent was told, unless it is malformed or taken; then a new one."""
    from tether.outbox import proposal_store
    from tether.outbox.model import is_proposal_id, new_proposal_id

    if isinstance(given, str) and is_proposal_id(given) and not proposal_store.exists(conn, given):
        return given
    while True:
        candidate = new_proposal_id()
        if not proposal_store.exists(conn, candidate):
            return candidate


def _summary(action: Action, run: RunFacts) -> str | None:
    if action.pinned is None:
        return run.diff_summary or None
    commits = action.pinned.get("commits") or []
    lines = [f"{c['id'][:12]} {c['subject']}" for c in commits]
    if action.summary:
        lines += ["", action.summary]
    return "\n".join(lines) or None


def _rename(path: Path, suffix: str) -> None:
    with contextlib.suppress(OSError):
        path.rename(path.with_name(path.name + suffix))
