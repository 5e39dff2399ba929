"""Doing a TODO item or the follow-up of a hand-started run: one run, written back.

A TODO item's box is ticked when its run completed (and its post-run stages
passed); a run whose step the gate's autonomy policy refused leaves the box
open with a note that makes it wait for a person.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from tether.loop import prompts, todo, unfinished
from tether.loop.autonomy import GateRefusal
from tether.loop.dispatched import (
    Dispatched,
    counts,
    demo_note,
    demonstrated,
    ran,
    run_gated,
    would_start,
)
from tether.run_status import RunStatus

if TYPE_CHECKING:
    from tether.loop.context import Loop


def _refused_steps(refusals: list[GateRefusal]) -> str:
    return "; ".join(dict.fromkeys(r.shown for r in refusals))


def todo_unit(loop: Loop, item: todo.TodoItem, dry_run: bool) -> Dispatched:
    from tether.runs.request import RunRequest

    last = unfinished.last_run_of_unit(loop.conn, item.key)
    previous = unfinished.followable(loop.conn, last.id if last else None)
    follow_up = previous.id if previous else None
    where = f"{item.file}:{item.line}"
    if dry_run:
        return would_start(loop, follow_up, f"{where} {item.text!r}", item.key)
    request = RunRequest(
        prompt=prompts.todo_prompt(item),
        profile=loop.profile,
        unit=item.key,
        iterations=loop.settings.follow_up_iterations if previous else None,
        follow_up=follow_up,
        justification=loop.justification,
        cwd=loop.project_root,
    )
    outcome, refusals = run_gated(loop, request)
    decision = "follow-up" if previous else "run"
    if loop.demonstration:
        shown = demonstrated(outcome, f"{where}; its box stays open", [])
        shown.decision, shown.unit = decision, item.key
        return shown
    result = ran(outcome, Dispatched("", follow_up_of=follow_up, decision=decision, unit=item.key))
    failed = outcome.failed_stage if outcome.stop is RunStatus.COMPLETED else None
    if outcome.pending_proposals:
        ids = ", ".join(outcome.pending_proposals)
        note = f"waits for approval: run {outcome.run_id} proposed {ids} (`tether outbox show ID`)"
        todo.hold(loop.project_root, item, note, loop.session_line())
        result.summary = (
            f"run {outcome.run_id} on {where}: proposed {ids}; box left open, the item now "
            f"waits for a person's decision"
        )
    elif refusals:
        steps = _refused_steps(refusals)
        note = f"waits for approval: the gate refused {steps}"
        todo.hold(loop.project_root, item, note, loop.session_line())
        result.summary = (
            f"run {outcome.run_id} on {where}: the gate refused {steps}; box left open, "
            f"the item now waits for approval"
        )
    elif failed is not None:
        result.summary = (
            f"run {outcome.run_id} on {where} completed, but its post-run stage "
            f"`{' '.join(failed.command)}` failed (exit {failed.exit_code}); box left open"
        )
    elif outcome.stop is RunStatus.COMPLETED:
        note = f"done in tether run {outcome.run_id}"
        ticked = todo.mark_done(loop.project_root, item, note, loop.session_line())
        result.summary = f"run {outcome.run_id} on {where} completed ({counts(outcome)})" + (
            "; box ticked" if ticked else "; the item changed meanwhile, box left as is"
        )
    else:
        result.summary = (
            f"run {outcome.run_id} on {where} stopped: {outcome.stop_text}; report: {result.report}"
        )
    return result


def manual_follow_up(loop: Loop, found: unfinished.ManualFollowUp, dry_run: bool) -> Dispatched:
    from tether.runs.request import RunRequest

    run = found.run
    if dry_run:
        return Dispatched(
            f"would follow up run {run.id} (unit {run.unit})" + demo_note(loop),
            follow_up_of=run.id,
            would=True,
            demonstration=loop.demonstration,
            decision="follow-up",
            unit=run.unit,
        )
    prompt_file = Path(run.run_dir) / "prompt.md"
    original = prompt_file.read_text("utf-8") if prompt_file.is_file() else ""
    request = RunRequest(
        prompt=prompts.manual_follow_up_prompt(run.unit or run.id, original),
        profile=loop.profile,
        unit=run.unit,
        iterations=loop.settings.follow_up_iterations,
        follow_up=run.id,
        justification=loop.justification,
        cwd=loop.project_root,
    )
    outcome, refusals = run_gated(loop, request)
    refused = _refused_steps(refusals)
    said = Dispatched(
        f"follow-up {outcome.run_id} of {run.id} (unit {run.unit}): {outcome.stop_text} "
        f"({counts(outcome)})"
        + (f"; the gate refused {refused}: it waits for a person" if refused else "")
        + demo_note(loop),
        follow_up_of=run.id,
        demonstration=loop.demonstration,
        decision="follow-up",
        unit=run.unit,
    )
    return ran(outcome, said)
