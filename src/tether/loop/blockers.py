"""Has a blocker gone? BLOCKED checks (run, not assumed) and WAITING dates and markers.

A BLOCKED ticket's ``check`` is a command (argv, no shell, bounded by
``check_timeout``; exit 0 proves the blocker gone) or a ticket id that must be
DONE. A check that hangs is killed at its timeout and the ticket stays
blocked. The evidence — command, exit code, output tail — is written on the
ticket (front matter ``last_check``) unless the tick is a dry run.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tether.board import BoardView, State, Ticket
from tether.clock import to_iso
from tether.loop import tick_memory
from tether.loop.board_queue import arrived, done_check, in_order

if TYPE_CHECKING:
    from tether.loop.commands import CommandResult
    from tether.loop.context import Loop


@dataclass(frozen=True)
class CheckOutcome:
    ticket: str
    passed: bool
    evidence: dict[str, Any]
    skipped: str | None = None  # why the check did not run this tick

    def note(self) -> str:
        e = self.evidence
        if "ticket" in e:
            return f"check: ticket {e['ticket']} is {e['state']}"
        tail = e.get("output_tail") or ""
        shown = f"; output: {tail[-200:]}" if tail else ""
        return f"check `{shlex.join(e['command'])}` {e['verdict']}{shown}"


def _verdict(result: CommandResult) -> str:
    if result.missing:
        return f"could not run: executable {result.argv[0]!r} not found"
    if result.timed_out:
        return f"was killed after {result.seconds:.1f}s (timeout); still blocked"
    return f"exited {result.exit_code}" + ("" if result.ok else "; still blocked")


def run_check(loop: Loop, view: BoardView, ticket: Ticket) -> CheckOutcome:
    """Run one ticket's check now and say whether the blocker is gone."""
    # imported here: running a command loads subprocess; most ticks run none
    from tether.loop.commands import run_command

    check = ticket.check
    verdict = done_check(view, ticket)
    if verdict is not None:
        passed, state = verdict
        return CheckOutcome(ticket.id, passed, {"ticket": check, "state": state, "passed": passed})
    if not check:
        return CheckOutcome(ticket.id, False, {"passed": False}, skipped="no check")
    result = run_command(check, cwd=loop.project_root, timeout=loop.check_timeout, env=loop.env)
    evidence = {**result.as_dict(), "passed": result.ok, "verdict": _verdict(result)}
    return CheckOutcome(ticket.id, result.ok, evidence)


@dataclass(frozen=True)
class BlockedChecks:
    """What a tick's look at the BLOCKED tickets found."""

    unblocked: Ticket | None  # the first whose check passed now
    outcome: CheckOutcome | None  # its check
    # one line per check run (and one for those checked too recently), as the tick prints it
    evidence: list[dict[str, Any]]


def check_blocked(loop: Loop, view: BoardView, *, dry_run: bool) -> BlockedChecks:
    """The first BLOCKED ticket (priority order) whose check passes now, and all evidence."""
    now = loop.clock.now()
    evidence: list[dict[str, Any]] = []
    blocked = in_order(view, State.BLOCKED)
    checked = tick_memory.last_checks(loop.conn, loop.scope) if loop.check_interval > 0 else {}
    recent = 0
    found: tuple[Ticket, CheckOutcome] | None = None
    for ticket in blocked:
        last = checked.get(ticket.id)
        if last is not None and (now - last).total_seconds() < loop.check_interval:
            recent += 1  # checked within check_interval: not run again yet
            continue
        outcome = run_check(loop, view, ticket)
        evidence.append({"ticket": ticket.id, **outcome.evidence})
        if not dry_run:
            tick_memory.record_check(
                loop.conn,
                loop.scope,
                ticket.id,
                now,
                outcome.passed,
                outcome.evidence.get("exit_code"),
            )
            if not outcome.passed and _changed(ticket, outcome, now):
                loop.board.update(ticket.id, front={"last_check": _front(outcome, now)})
        if outcome.passed:
            found = (ticket, outcome)
            break
    if recent:
        evidence.append(
            {
                "skipped": recent,
                "why": f"checked within check_interval {loop.settings.check_interval}",
            }
        )
    if found is None:
        return BlockedChecks(None, None, evidence)
    return BlockedChecks(found[0], found[1], evidence)


def _changed(ticket: Ticket, outcome: CheckOutcome, now: Any) -> bool:
    """Whether the evidence differs from what the ticket already shows (time aside)."""
    before = ticket.front.get("last_check")
    if not isinstance(before, dict):
        return True
    after = _front(outcome, now)
    return {k: v for k, v in before.items() if k != "at"} != {
        k: v for k, v in after.items() if k != "at"
    }


def _front(outcome: CheckOutcome, now: Any) -> dict[str, Any]:
    e = outcome.evidence
    front = {"at": to_iso(now), "passed": outcome.passed}
    if "ticket" in e:
        front.update(ticket=e["ticket"], state=e["state"])
    else:
        front.update(
            command=list(e["command"]),
            exit_code=e["exit_code"],
            timed_out=e["timed_out"],
            output_tail=(e["output_tail"] or "")[-300:],
        )
    return front


def check_waiting(loop: Loop, view: BoardView) -> tuple[Ticket | None, str | None, int]:
    """The first WAITING ticket (priority order) whose date or marker has arrived."""
    today = loop.clock.now().date()
    waiting = in_order(view, State.WAITING)
    for ticket in waiting:
        why = arrived(loop.project_root, ticket, today)
        if why is not None:
            return ticket, why, len(waiting)
    return None, None, len(waiting)


def evidence_front(outcome: CheckOutcome, now: Any) -> dict[str, Any]:
    """The ``last_check`` front matter of a check that passed (written on the move)."""
    return _front(outcome, now)
