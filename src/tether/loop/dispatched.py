"""What a tick did with its unit (``Dispatched``), and the small helpers every kind of unit
shares: a run under the autonomy policy, what a run or a dry run reports, the words for a
run's counts, its report's path, a demonstration run."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from tether.loop.autonomy import GateFile, GateRefusal
from tether.run_status import RunStatus

if TYPE_CHECKING:
    from tether.board import Ticket
    from tether.loop.context import Loop
    from tether.runs.outcome import RunOutcome
    from tether.runs.request import RunRequest


# Said on every tick whose unit went to the built-in agent nobody chose.
DEMONSTRATION_WARNING = (
    "no agent profile is configured, so this run used tether's built-in `scripted` "
    "profile: a fake agent that does no real work. Its outcome is a demonstration: no "
    "ticket moves to DONE, no TODO box is ticked. Configure a real agent in tether.toml "
    '([profiles.NAME] with harness = "claude-code", "codex", ... and default = true), '
    "or choose a profile with --profile or [loop] profile."
)


@dataclass
class Dispatched:
    summary: str
    run_id: str | None = None
    stop: str | None = None
    follow_up_of: str | None = None
    report: str | None = None
    moved: list[str] = field(default_factory=list)  # "T-… → DONE"
    cancelled: bool = False
    would: bool = False  # dry run: nothing was done
    demonstration: bool = False  # the built-in agent nobody chose: nothing recorded
    # what the tick decided, the same in a dry run and a real one:
    # "run", "follow-up", "give-up", "triage", "routine", "policy"
    decision: str = ""
    unit: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "summary": self.summary,
            "run_id": self.run_id,
            "stop": self.stop,
            "follow_up_of": self.follow_up_of,
            "report": self.report,
            "moved": self.moved,
            "cancelled": self.cancelled,
            "dry_run": self.would,
            "demonstration": self.demonstration,
            "decision": self.decision,
            "unit": self.unit,
        }


def demo_note(loop: Loop) -> str:
    return " (a demonstration: the built-in scripted agent)" if loop.demonstration else ""


def run_gated(
    loop: Loop, request: RunRequest, ticket: Ticket | None = None
) -> tuple[RunOutcome, list[GateRefusal]]:
    """Dispatch ``request`` with the autonomy policy's gate file (for ``ticket``, if any).

    Returns the run's outcome and the steps the gate refused; the file goes whatever
    happens (a ``BudgetError`` that refuses the run passes through).
    """
    gate = GateFile(loop.config.home, loop.policy.gate_data(ticket, loop.project_root))
    try:
        outcome = loop.dispatcher(replace(request, env={**request.env, **gate.env()}))
        return outcome, gate.refusals()
    finally:
        gate.remove()


def ran(outcome: RunOutcome, said: Dispatched) -> Dispatched:
    """What a unit that went to a run reports: what the tick ``said`` of it, with the run,
    how it stopped and its report."""
    return replace(
        said,
        run_id=outcome.run_id,
        stop=outcome.stop.value,
        report=report_path(outcome),
        cancelled=outcome.stop is RunStatus.CANCELLED,
    )


def would_start(loop: Loop, previous: str | None, what: str, unit: str) -> Dispatched:
    """A dry run's word for a unit that would go to a run (a follow-up of ``previous``)."""
    kind = f"a follow-up of {previous}" if previous else "a run"
    return Dispatched(
        f"would start {kind} on {what}" + demo_note(loop),
        follow_up_of=previous,
        would=True,
        demonstration=loop.demonstration,
        decision="follow-up" if previous else "run",
        unit=unit,
    )


def demonstrated(outcome: RunOutcome, where: str, moved: list[str]) -> Dispatched:
    """A run of the built-in agent nobody chose: reported, nothing written back."""
    return ran(
        outcome,
        Dispatched(
            f"demonstration run {outcome.run_id} by the built-in scripted agent: "
            f"{outcome.stop_text} ({counts(outcome)}); nothing recorded on {where}",
            moved=moved,
            demonstration=True,
        ),
    )


def counts(outcome: RunOutcome) -> str:
    led = outcome.ledger
    return f"{led.iterations} iterations, {led.tool_calls} tool calls"


def report_path(outcome: RunOutcome) -> str | None:
    if outcome.report is None or outcome.paths is None:
        return None
    return str(outcome.paths.report_md)
