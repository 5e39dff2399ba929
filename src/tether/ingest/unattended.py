"""``ingest run``: entries without a human hold, one atomic run each, one after another.

Never in parallel: an exclusive lock on ``incoming/.run.lock`` refuses a second
``ingest run`` while one works, and the entries go one by one, each in a fresh
session (``supervise`` starts a new session id per run). An entry whose
manifest needs a dialog (key points, fidelity/authority, a name collision in
``raw/``, a publish/sync that exited 42) never reaches a run: it becomes a
``USER/decision`` ticket on the board with the reasons, once.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tether.fs import lock_file
from tether.ingest.entry import Entry, IngestRefusedError
from tether.ingest.instructions import ingest_instructions
from tether.ingest.manifest import NEEDS_HUMAN_EXIT, dialog_reasons
from tether.ingest.queue import Queue
from tether.wiki.layout import Wiki

RUN_LOCK = ".run.lock"


@dataclass(frozen=True)
class RunOf:
    """The run an entry went through."""

    run_id: str
    session_id: str | None
    started_at: str | None
    ended_at: str | None
    exit_code: int


@dataclass(frozen=True)
class EntryResult:
    """What ``ingest run`` did with one entry.

    ``status`` is ``done``, ``user`` (held for the user: ``reasons`` and the
    ``ticket`` filed) or the run's own end (left claimed: ``note`` says what next).
    """

    id: str
    status: str
    run: RunOf | None = None
    reasons: tuple[str, ...] = ()
    ticket: str | None = None
    note: str | None = None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "status": self.status}
        if self.run is not None:
            out |= {
                "run_id": self.run.run_id,
                "session_id": self.run.session_id,
                "started_at": self.run.started_at,
                "ended_at": self.run.ended_at,
                "exit_code": self.run.exit_code,
            }
        if self.status == "user":
            out |= {"reasons": list(self.reasons), "ticket": self.ticket}
        if self.note is not None:
            out["note"] = self.note
        return out


Report = Callable[[EntryResult], None]


@contextmanager
def run_lock(queue: Queue) -> Iterator[None]:
    queue.incoming.mkdir(parents=True, exist_ok=True)
    with (queue.incoming / RUN_LOCK).open("a+") as handle:
        if not lock_file(handle, wait=False):
            raise IngestRefusedError(
                "refused: another `tether ingest run` is working on this queue; entries are "
                "ingested one after another, never in parallel."
            )
        yield


def ticket_for(
    board_root: Path, entry: Entry, reasons: list[str], env: Mapping[str, str] | None = None
) -> str:
    """File a USER/decision ticket for an entry that needs the user; its id.

    The hand-off ends with the session stamp of ``env``."""
    from tether.board import Board, State
    from tether.core.session_stamp import stamp

    board = Board(board_root)
    board.ensure()
    body = "\n".join(
        [
            f"The ingest entry `{entry.id}` ({entry.kind}) needs the user before it can be "
            "ingested; an unattended run would have to guess.",
            "",
            *[f"- {reason}" for reason in reasons],
            "",
            "Ingest it interactively (`tether ingest next` in a fresh context), or complete its "
            "capture manifest.",
            "",
            stamp(os.environ if env is None else env, "tether-ingest"),
        ]
    )
    ticket = board.add(
        f"Ingest {entry.id}: needs the user",
        state=State.USER,
        reason="decision",
        body=body,
        front={"ingest_entry": entry.id, "needs": "; ".join(reasons)},
    )
    return ticket.id


@dataclass(frozen=True)
class Unattended:
    """How ``ingest run`` works through the queue."""

    board_root: Path  # where an entry held for the user gets its ticket
    profile: str | None  # the profile every run uses
    timeout: float | None = None  # each run's timeout
    limit: int | None = None  # at most this many runs


def run_unattended(
    wiki: Wiki, plan: Unattended, *, env: Mapping[str, str], report: Report | None = None
) -> list[EntryResult]:
    """Every entry waiting in ``incoming/``, one run each, one after the other; an entry
    that needs a person is held for them (a ticket) and never run."""
    queue = Queue(wiki)
    results: list[EntryResult] = []
    done_runs = 0
    seen: set[str] = set()
    with run_lock(queue):
        while plan.limit is None or done_runs < plan.limit:
            pending = [e for e in queue.waiting() if e.id not in seen]
            if not pending:
                break
            entry = pending[0]
            seen.add(entry.id)
            reasons = dialog_reasons(entry.manifest, queue.raw)
            if reasons:
                result = _hold(queue, plan.board_root, entry, reasons, env)
            else:
                ran = _run_entry(queue, entry, plan, env)
                if ran is None:
                    continue
                done_runs += 1
                result = ran
            results.append(result)
            if report is not None:
                report(result)
    return results


def _run_entry(
    queue: Queue, entry: Entry, plan: Unattended, env: Mapping[str, str]
) -> EntryResult | None:
    """Claim the entry and run it; None when another process claimed it first."""
    from tether.run_status import RunStatus
    from tether.runs.supervisor import RunRequest, supervise

    owner = f"ingest-run:{os.getpid()}:{entry.id}"
    claimed = queue.claim(entry, owner)
    if claimed is None:
        return None
    outcome = supervise(
        RunRequest(
            prompt=ingest_instructions(claimed, queue.wiki, unattended=True),
            profile=plan.profile,
            unit=f"ingest:{entry.id}",
            timeout=plan.timeout,
            cwd=queue.wiki.root,
        ),
        env=env,
    )
    row = outcome.row
    ran = RunOf(
        run_id=outcome.run_id,
        session_id=row.session_id,
        started_at=row.started_at,
        ended_at=row.ended_at,
        exit_code=int(outcome.exit_code),
    )
    failed = outcome.failed_stage  # a publish/sync that failed, if any
    stage_exit = failed.exit_code if failed is not None else None
    if outcome.stop is RunStatus.COMPLETED and stage_exit == NEEDS_HUMAN_EXIT:
        back = queue.requeue(claimed.id)
        back = queue.update_manifest(back, sync_exit=NEEDS_HUMAN_EXIT)
        reasons = dialog_reasons(back.manifest, queue.raw)
        hold = _hold(queue, plan.board_root, back, reasons, env)
        return EntryResult(entry.id, "user", ran, reasons=hold.reasons, ticket=hold.ticket)
    if outcome.stop is RunStatus.COMPLETED:
        queue.end(owner, claimed.id, env=env)
        return EntryResult(entry.id, "done", ran)
    return EntryResult(
        entry.id,
        outcome.stop.value,
        ran,
        note=(
            f"left claimed; see `tether report {outcome.run_id}`, then "
            f"`tether ingest requeue {entry.id}`"
        ),
    )


def _hold(
    queue: Queue, board_root: Path, entry: Entry, reasons: list[str], env: Mapping[str, str]
) -> EntryResult:
    ticket = entry.manifest.ticket
    if not ticket:
        ticket = ticket_for(board_root, entry, reasons, env)
        queue.update_manifest(entry, ticket=ticket)
    return EntryResult(entry.id, "user", reasons=tuple(reasons), ticket=ticket)
