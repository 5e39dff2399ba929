"""Doing the one unit level 1 found: triage, a move, or one atomic run — and writing it back.

A run is a fresh session through the run supervisor (the same path as ``tether
run``): the unit's text is the prompt and, for a follow-up, the previous
report goes in with it. The outcome is recorded where the unit lives: a ticket
goes to DONE with the run id when the run completed, and stays ACTIONABLE with
the report linked when a limit stopped it; a TODO item's box is ticked. A unit
that ended unfinished ``max_attempts`` times in a row goes to the person.

When the runs go to tether's built-in scripted profile and nobody chose it
(``Loop.demonstration``), a run is only a demonstration: its outcome is
reported, with a warning, and nothing is written back to the ticket or the TODO
file.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from tether.board import BoardView, State, Ticket
from tether.core.errors import BudgetError
from tether.loop import blockers, prompts, routines, unfinished
from tether.loop.autonomy import ADVICE, GATE_REFUSED, GateRefusal
from tether.loop.context import LoopError
from tether.loop.dispatch_todo import manual_follow_up, todo_unit
from tether.loop.dispatched import (
    DEMONSTRATION_WARNING,
    Dispatched,
    counts,
    demonstrated,
    ran,
    report_path,
    run_gated,
    would_start,
)
from tether.loop.level1 import Work
from tether.run_status import RunStatus

__all__ = ["DEMONSTRATION_WARNING", "Dispatched", "dispatch", "triage_target"]

if TYPE_CHECKING:
    from tether.loop.context import Loop
    from tether.runs.outcome import RunOutcome
    from tether.runs.request import RunRequest


def dispatch(loop: Loop, work: Work, view: BoardView, *, dry_run: bool) -> Dispatched:
    """Do ``work`` (found in ``view``, the board as level 1 saw it)."""
    if work.source == "intake":
        return _triage(loop, work, view, dry_run)
    if work.routine is None:  # every other unit goes to an agent
        loop.require_profile()
    if work.ticket is not None:
        return _ticket(loop, work, work.ticket, dry_run)
    if work.todo is not None:
        return todo_unit(loop, work.todo, dry_run)
    if work.routine is not None:
        unit = f"routine:{work.routine.name}"
        if dry_run:
            return Dispatched(
                f"would run routine {work.routine.name}", would=True, decision="routine", unit=unit
            )
        _, summary = routines.run_routine(loop, work.routine)
        return Dispatched(summary, decision="routine", unit=unit)
    assert work.follow_up is not None
    return manual_follow_up(loop, work.follow_up, dry_run)


# --- triage --------------------------------------------------------------------


def triage_target(front: Any) -> tuple[State, str | None]:
    """Where an INBOX entry goes: by the keys its front matter already has."""
    if not isinstance(front, dict):
        return State.ACTIONABLE, None
    if front.get("needs"):
        return State.USER, "decision"
    if front.get("blocked_by") and front.get("check"):
        return State.BLOCKED, "dependency"
    if front.get("until"):
        return State.WAITING, "scheduled"
    if front.get("marker"):
        return State.WAITING, "marker"
    return State.ACTIONABLE, None


def _triage(loop: Loop, work: Work, view: BoardView, dry_run: bool) -> Dispatched:
    by_path = {t.path: t for t in view.in_state(State.INBOX)}
    moved: list[str] = []
    problems: list[str] = []
    for path in work.triage:
        ticket = by_path.get(path)
        state, reason = triage_target(ticket.front if ticket else None)
        front: dict[str, Any] = {}
        verdict = loop.policy.assess(_entry_text(path, ticket)) if state is not State.USER else None
        held = loop.holding(verdict)
        if held is not None:  # policy: never ACTIONABLE, whatever the keys say
            state, reason = State.USER, held.reason
            front = {"needs": held.needs()}
        elif verdict is not None:  # sandboxed: it runs, and the policy's word is advice
            front = {ADVICE: verdict.advice()}
        where = f"{state.value}/{reason}" if reason else state.value
        if dry_run:
            moved.append(f"{path.name} → {where}")
            continue
        try:
            made = loop.board.triage(path, state=state, reason=reason, front=front)
        except Exception as exc:  # one bad note must not stop the others
            problems.append(f"{path.name}: {exc}")
            continue
        moved.append(f'{path.name} → {made.id} {made.location} "{made.title}"')
    if problems and not moved:
        raise LoopError(
            f"INBOX is not triaged and tether could not triage it: {'; '.join(problems)}. "
            f"Fix or move these files by hand; no STOP may be claimed while INBOX is open."
        )
    verb = "would triage" if dry_run else "triaged"
    summary = f"{verb} {len(moved)} INBOX entr{'y' if len(moved) == 1 else 'ies'}: " + "; ".join(
        moved
    )
    if problems:
        summary += f" (could not triage: {'; '.join(problems)})"
    return Dispatched(summary, moved=moved, would=dry_run, decision="triage")


def _entry_text(path: Path, ticket: Ticket | None) -> str:
    """What the policy reads of an INBOX entry: a ticket's title and text, a note's text."""
    if ticket is not None:
        return f"{ticket.title}\n{ticket.body}"
    try:
        return path.read_bytes().decode("utf-8", "replace")
    except OSError:
        return ""


# --- tickets -------------------------------------------------------------------


def _held_by_policy(
    loop: Loop, ticket: Ticket, dry_run: bool, moved: list[str]
) -> Dispatched | None:
    """A ticket whose text the policy holds goes to USER/approval or USER/session, unrun."""
    verdict = loop.holding(loop.policy.ticket(ticket))
    if verdict is None:
        return None
    where = f"USER/{verdict.reason}"
    unit = f"ticket:{ticket.id}"
    if dry_run:
        return Dispatched(
            f"would move {ticket.id} to {where}: it needs {verdict.needs(ticket.id)}",
            would=True,
            decision="policy",
            unit=unit,
        )
    needs = verdict.needs(ticket.id)
    loop.board.move(
        ticket.id,
        State.USER,
        verdict.reason,
        note=f"not started: it needs {needs}",
        front={"needs": needs},
    )
    moved.append(f"{ticket.id} → {where}")
    return Dispatched(
        f"{ticket.id} not started: it needs {needs} → {where}",
        moved=moved,
        decision="policy",
        unit=unit,
    )


def _ticket(loop: Loop, work: Work, ticket: Ticket, dry_run: bool) -> Dispatched:
    moved: list[str] = []
    streak = unfinished.ticket_streak(loop.conn, ticket)
    previous = unfinished.followable(loop.conn, ticket.last_run)
    unit = f"ticket:{ticket.id}"
    held = _held_by_policy(loop, ticket, dry_run, moved)
    if held is not None:
        return held
    if dry_run:
        if streak >= loop.settings.max_attempts:
            return Dispatched(
                f"would move {ticket.id} to USER/decision: it ended unfinished {streak} times "
                f"in a row",
                would=True,
                decision="give-up",
                unit=unit,
            )
        try:
            _startable(loop, _ticket_request(loop, ticket, previous.id if previous else None))
        except BudgetError as exc:
            return Dispatched(
                f"would move {ticket.id} to USER/decision: it could not start: {exc}",
                would=True,
                decision="budget",
                unit=unit,
            )
        return would_start(
            loop, previous.id if previous else None, f'{ticket.id} "{ticket.title}"', unit
        )
    if work.source == "blocked" and work.check is not None:
        ticket = loop.board.move(
            ticket.id,
            State.ACTIONABLE,
            note=f"unblocked: {work.check.note()}",
            front={"last_check": blockers.evidence_front(work.check, loop.clock.now())},
        )
        moved.append(f"{ticket.id} BLOCKED → ACTIONABLE")
    elif work.source == "waiting":
        ticket = loop.board.move(ticket.id, State.ACTIONABLE, note=f"due: {work.arrived}")
        moved.append(f"{ticket.id} WAITING → ACTIONABLE")
    if streak >= loop.settings.max_attempts:
        return _give_up(loop, ticket, streak, moved)
    try:
        request = _ticket_request(loop, ticket, previous.id if previous else None)
        outcome, refusals = run_gated(loop, request, ticket)
    except BudgetError as exc:  # the ticket's own budget is not acceptable
        loop.board.move(
            ticket.id,
            State.USER,
            "decision",
            note=f"not started: {exc}",
            front={"needs": f"a decision: {exc}"},
        )
        moved.append(f"{ticket.id} → USER/decision")
        return Dispatched(
            f"{ticket.id} could not start: {exc}; moved to USER/decision",
            moved=moved,
            decision="budget",
            unit=unit,
        )
    if loop.demonstration:
        done = demonstrated(outcome, f"{ticket.id}; it stays in {ticket.location}", moved)
    elif outcome.pending_proposals:
        done = _proposed(loop, ticket, outcome, previous.id if previous else None, refusals, moved)
    elif refusals:
        done = _refused(loop, ticket, outcome, previous.id if previous else None, refusals, moved)
    else:
        done = _record_ticket(loop, ticket, outcome, previous.id if previous else None, moved)
    done.decision, done.unit = ("follow-up" if previous else "run"), unit
    return done


def _refused(
    loop: Loop,
    ticket: Ticket,
    outcome: RunOutcome,
    follow_up: str | None,
    refusals: list[GateRefusal],
    moved: list[str],
) -> Dispatched:
    """The gate refused a step only a person may allow: not done; the ticket waits in
    USER/approval, whatever the run's own ending."""
    steps = "; ".join(dict.fromkeys(r.shown_with_rule for r in refusals))
    needs = (
        f"a human approval: its run tried {steps}, which the autonomy policy refuses "
        f"without one; `tether board approve {ticket.id}` lets exactly these commands "
        f"through on its next run (or change the ticket)"
    )
    report = report_path(outcome)
    kind = f"follow-up {outcome.run_id} of {follow_up}" if follow_up else f"run {outcome.run_id}"
    note = (
        f"run {outcome.run_id} ended: {outcome.stop_text} ({counts(outcome)}); "
        f"the gate refused {steps}"
    )
    front = {**_attempt_front(ticket, [*ticket.runs, outcome.run_id], outcome.run_id)}
    commands = [r.command for r in refusals if r.command]
    front.update(needs=needs, report=report)
    front[GATE_REFUSED] = list(dict.fromkeys(commands))  # what an approval lets through
    loop.board.move(ticket.id, State.USER, "approval", note=note, front=front)
    moved.append(f"{ticket.id} → USER/approval")
    return ran(
        outcome,
        Dispatched(
            f"{kind} on {ticket.id}: the gate refused {steps} → USER/approval",
            follow_up_of=follow_up,
            moved=moved,
        ),
    )


def _proposed(
    loop: Loop,
    ticket: Ticket,
    outcome: RunOutcome,
    follow_up: str | None,
    refusals: list[GateRefusal],
    moved: list[str],
) -> Dispatched:
    """The run proposed external steps: the ticket waits in USER/approval, naming them."""
    # here, as the outbox below: only a run that proposed needs them, never a dry run
    from tether.loop import proposals
    from tether.outbox.proposal_store import get

    waiting = [get(loop.conn, pid) for pid in outcome.pending_proposals]
    listed = "; ".join(f"{p.id} ({p.headline})" for p in waiting)
    kind = f"follow-up {outcome.run_id} of {follow_up}" if follow_up else f"run {outcome.run_id}"
    # the note (ticket text) names the proposals by id and kind; `needs` says what they do
    note = (
        f"run {outcome.run_id} ended: {outcome.stop_text} ({counts(outcome)}); "
        f"it proposed {', '.join(f'{p.id} ({p.kind})' for p in waiting)}: waits for a "
        f"person's decision"
    )
    if refusals:
        steps = "; ".join(dict.fromkeys(r.shown for r in refusals))
        note += f"; the gate refused {steps}"
    front = {**_attempt_front(ticket, [*ticket.runs, outcome.run_id], outcome.run_id)}
    front.update(proposals.parking_front(waiting), report=report_path(outcome))
    loop.board.move(ticket.id, State.USER, "approval", note=note, front=front)
    moved.append(f"{ticket.id} → USER/approval")
    return ran(
        outcome,
        Dispatched(
            f"{kind} on {ticket.id}: proposed {listed} → USER/approval",
            follow_up_of=follow_up,
            moved=moved,
        ),
    )


def _startable(loop: Loop, request: RunRequest) -> None:
    """Raise the ``BudgetError`` the run would be refused with (a dry run's look ahead)."""
    from tether.runs.request import choose_run_budget

    choose_run_budget(loop.config, request)


def _ticket_request(loop: Loop, ticket: Ticket, follow_up: str | None) -> RunRequest:
    from tether.runs.request import RunRequest

    budget = ticket.front.get("budget") if loop.settings.ticket_budgets else None
    if budget is not None and (isinstance(budget, bool) or not isinstance(budget, int)):
        raise BudgetError(
            f"`budget` of {ticket.id} must be a whole number of iterations, got {budget!r}",
            key="budget",
        )
    iterations: int | None = None
    budget_request: int | None = None
    justification = loop.justification
    # a budget set after the ticket's runs began is a person's: it wins over
    # follow_up_iterations, for every later run of the ticket
    raised = budget is not None and unfinished.person_budget(ticket)
    if follow_up and loop.settings.follow_up_iterations and not raised:
        iterations = loop.settings.follow_up_iterations
    elif budget is not None:
        budget_request = budget
        reason = ticket.front.get("budget_reason")
        justification = (
            str(reason)
            if isinstance(reason, str) and reason.strip()
            else f"budget of {budget} iterations "
            + ("raised" if raised else "proposed")
            + f" in the front matter of {ticket.id}"
        )
    return RunRequest(
        prompt=prompts.ticket_prompt(ticket),
        profile=loop.profile,
        unit=f"ticket:{ticket.id}",
        iterations=iterations,
        follow_up=follow_up,
        budget_request=budget_request,
        justification=justification,
        cwd=loop.project_root,
    )


def _attempt_front(ticket: Ticket, runs: list[str], run_id: str) -> dict[str, Any]:
    """``runs``/``last_run``, and what tells a person's later change (see ``unfinished``)."""
    front: dict[str, Any] = {
        "runs": runs,
        "last_run": run_id,
        unfinished.ATTEMPT_BASIS: unfinished.attempt_basis(ticket),
    }
    planned = ticket.front.get("budget")
    if not ticket.runs and planned is not None:  # the budget its first run was planned with
        front[unfinished.PLANNED_BUDGET] = planned
    if unfinished.person_changed(ticket) and ticket.last_run:
        front[unfinished.RETRY_FROM] = ticket.last_run  # count again from this run on
    return front


def _record_ticket(
    loop: Loop, ticket: Ticket, outcome: RunOutcome, follow_up: str | None, moved: list[str]
) -> Dispatched:
    from tether.loop.proposals import FEEDBACK  # after a run only: a dry run never loads it

    runs = [*ticket.runs, outcome.run_id]
    attempt = _attempt_front(ticket, runs, outcome.run_id)
    kind = f"follow-up {outcome.run_id} of {follow_up}" if follow_up else f"run {outcome.run_id}"
    base = Dispatched(
        "",
        run_id=outcome.run_id,
        stop=outcome.stop.value,
        follow_up_of=follow_up,
        moved=moved,
        cancelled=outcome.stop is RunStatus.CANCELLED,
    )
    failed = outcome.failed_stage if outcome.stop is RunStatus.COMPLETED else None
    if failed is not None:
        check = " ".join(failed.command)
        where = f"{outcome.paths.stages}" if outcome.paths is not None else "stages.json"
        note = (
            f"run {outcome.run_id} completed ({counts(outcome)}), but its post-run stage "
            f"`{check}` failed (exit {failed.exit_code}; output in {where}); not done yet"
        )
        updated = loop.board.update(ticket.id, front=attempt, note=note)
        base.summary = f"{kind} on {ticket.id}: {note}"
        streak = unfinished.ticket_streak(loop.conn, updated)
        if streak >= loop.settings.max_attempts:
            base.summary += f"; {_give_up(loop, updated, streak, moved).summary}"
        return base
    if outcome.stop is RunStatus.COMPLETED:
        loop.board.move(
            ticket.id,
            State.DONE,
            note=f"done in run {outcome.run_id} ({counts(outcome)})",
            front={**attempt, "report": None, FEEDBACK: None},
        )
        moved.append(f"{ticket.id} → DONE")
        base.summary = f"{kind} on {ticket.id} completed ({counts(outcome)}) → DONE"
        return base
    report = report_path(outcome)
    base.report = report
    linked = f"; report: {report}" if report else ""
    note = f"run {outcome.run_id} ended: {outcome.stop_text} ({counts(outcome)}){linked}"
    updated = loop.board.update(ticket.id, front={**attempt, "report": report}, note=note)
    base.summary = f"{kind} on {ticket.id} stopped: {outcome.stop_text} ({counts(outcome)}){linked}"
    streak = unfinished.ticket_streak(loop.conn, updated)
    if outcome.stop is not RunStatus.CANCELLED and streak >= loop.settings.max_attempts:
        given = _give_up(loop, updated, streak, moved)
        base.summary += f"; {given.summary}"
    return base


def _give_up(loop: Loop, ticket: Ticket, streak: int, moved: list[str]) -> Dispatched:
    how = (
        "front matter `budget`"
        if loop.settings.ticket_budgets
        else "`[loop] follow_up_iterations`, or front matter `budget` with "
        "`[loop] ticket_budgets = true`"
    )
    needs = (
        f"a decision: {streak} runs in a row ended unfinished; split the ticket or "
        f"give it a bigger budget ({how}), then move it back"
    )
    front: dict[str, Any] = {"needs": needs}
    if ticket.last_run:  # moved back by a person, it gets fresh attempts
        front[unfinished.RETRY_FROM] = ticket.last_run
    loop.board.move(ticket.id, State.USER, "decision", note=needs, front=front)
    moved.append(f"{ticket.id} → USER/decision")
    return Dispatched(
        f"{ticket.id} ended unfinished {streak} times in a row → USER/decision",
        moved=moved,
        decision="give-up",
        unit=f"ticket:{ticket.id}",
    )
