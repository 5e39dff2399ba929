"""The progress report a limit-stopped run leaves behind (JSON + Markdown).

It is written for the next run as much as for the human: the follow-up run gets
the Markdown verbatim in its prompt.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from tether.core.session_stamp import hostname, session_line
from tether.events.accounting import Ledger
from tether.gate.runstop import RUN_STOPPING, SUPERVISOR_BEHIND, Refusal
from tether.run_status import RunStatus
from tether.runs.budget import Budget
from tether.runs.failure import Failure

if TYPE_CHECKING:
    from tether.runs.sandboxing import Findings

REASON_TEXT = {
    RunStatus.ITERATION_LIMIT: "iteration limit reached",
    RunStatus.TOOL_CALL_LIMIT: "tool-call limit reached",
    RunStatus.TIMEOUT: "wall-clock timeout reached",
    RunStatus.COMPLETED: "completed",
    RunStatus.FAILED: "the harness reported a failure",
    RunStatus.CANCELLED: "cancelled",
    RunStatus.ABANDONED: "abandoned: its supervisor died; recovered from its events",
    RunStatus.TOKEN_LIMIT: "token limit reached",
    RunStatus.COST_LIMIT: "cost limit reached",
    RunStatus.OUTPUT_LIMIT: "output limit reached (events.jsonl or stderr.log at its size cap)",
}

_INPUT_KEYS = ("command", "cmd", "file_path", "path", "pattern", "url", "description")


def _call_summary(name: str, data: Any) -> str:
    if isinstance(data, dict):
        for key in _INPUT_KEYS:
            value = data.get(key)
            if isinstance(value, str) and value:
                return f"{name}: {value[:200]}"
    return name


def open_points(ledger: Ledger) -> tuple[str, list[str]]:
    """The agent's own unfinished todo items, else its unfinished tool calls."""
    pending = [item.text for item in ledger.plan if not item.done]
    if ledger.plan:
        return "agent plan", pending
    calls = [_call_summary(c.name, c.input) for c in ledger.open_calls.values()]
    if calls:
        return "unfinished tool calls", calls
    return "none recorded", []


@dataclass
class ReportInput:
    run_id: str
    unit: str | None
    profile: str
    harness: str
    stop: RunStatus
    budget: Budget
    ledger: Ledger
    seconds: float
    files_changed: list[dict[str, str]]
    worktree_kind: str
    diff_stat: str | None
    skipped_stages: Sequence[Sequence[str]]
    session_id: str | None
    ended_at: datetime
    host: str | None = field(default_factory=hostname)
    # the first call the gate refused (gate/runstop.py), None when none was
    refused_call: Refusal | None = None
    # whether a per-run hook asked the gate before every call (a call past the
    # budget was then refused, not executed)
    gated: bool = False
    # why a failed run failed, with the end of the harness's stderr
    failure: Failure | None = None
    # what the run's sandbox saw (runs.sandboxing.findings), None: not recorded
    sandbox: Findings | None = None


@dataclass(frozen=True)
class Spent:
    """One budget's figure at the stop: what was used of what was allowed."""

    used: float | None
    limit: float | None

    def as_dict(self) -> dict[str, Any]:
        return {"used": self.used, "limit": self.limit}


@dataclass(frozen=True)
class CallPastBudget:
    """The call past the tool-call budget, and what stopped it."""

    tool: str | None
    tool_use_id: str | None
    call: str  # the call in words: its tool and its command, path or pattern
    number: int | None
    budget: int | None
    executed: bool | None  # None: nothing says whether it ran
    stopped_by: str  # "gate": the gate refused it; "stream": tether saw it first
    # the model step the call belongs to, when the gate refused it for being past
    # the iteration limit (``budget`` is then the call budget it was within)
    past_step: int | None = None
    # why the gate refused it, as its record says (gate/runstop.py: "call budget
    # spent", "iteration limit reached", "run stopping", "supervisor behind")
    reason: str | None = None
    # the stop status of the run, when the call came while the run was being stopped
    stopping_for: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class InFlight:
    """Model work the stop caught under way."""

    model_steps_past_limit: int
    after_stop: int
    text: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class SkippedStage:
    command: list[str]
    reason: str

    def as_dict(self) -> dict[str, Any]:
        return {"command": self.command, "reason": self.reason}


@dataclass(frozen=True)
class RunReport:
    """The progress report; ``report.json`` holds its ``as_dict``, ``report.md`` its Markdown."""

    run_id: str
    unit: str | None
    profile: str
    harness: str
    stop_reason: str
    stop_reason_text: str
    failure: Failure | None
    iterations: Spent
    tool_calls: Spent
    seconds: Spent
    tokens: Spent
    cost_usd: Spent
    iterations_exact: bool
    files_changed: list[dict[str, str]]
    worktree: str
    diff_stat: str | None
    open_points_source: str
    open_points: list[str]
    next_step: str
    last_message: str | None
    skipped_stages: list[SkippedStage]
    refused_call: CallPastBudget | None
    in_flight: InFlight | None
    sandbox: Findings | None  # None: not recorded
    session_id: str | None
    session_line: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "unit": self.unit,
            "profile": self.profile,
            "harness": self.harness,
            "stop_reason": self.stop_reason,
            "stop_reason_text": self.stop_reason_text,
            "failure": self.failure.as_dict() if self.failure is not None else None,
            "iterations": self.iterations.as_dict(),
            "tool_calls": self.tool_calls.as_dict(),
            "seconds": self.seconds.as_dict(),
            "tokens": self.tokens.as_dict(),
            "cost_usd": self.cost_usd.as_dict(),
            "iterations_exact": self.iterations_exact,
            "files_changed": self.files_changed,
            "worktree": self.worktree,
            "diff_stat": self.diff_stat,
            "worktree_left_as_is": True,
            "open_points_source": self.open_points_source,
            "open_points": self.open_points,
            "next_step": self.next_step,
            "last_message": self.last_message,
            "skipped_stages": [s.as_dict() for s in self.skipped_stages],
            "refused_call": self.refused_call.as_dict() if self.refused_call else None,
            "in_flight": self.in_flight.as_dict() if self.in_flight else None,
            "sandbox": self.sandbox.as_dict() if self.sandbox is not None else None,
            "session_id": self.session_id,
            "session_line": self.session_line,
        }


def build(data: ReportInput) -> RunReport:
    ledger = data.ledger
    budget = data.budget
    source, points = open_points(ledger)
    return RunReport(
        run_id=data.run_id,
        unit=data.unit,
        profile=data.profile,
        harness=data.harness,
        stop_reason=data.stop.value,
        stop_reason_text=REASON_TEXT[data.stop]
        + (data.failure.words() if data.failure is not None else ""),
        failure=data.failure,
        iterations=Spent(ledger.iterations, budget.iterations),
        tool_calls=Spent(ledger.tool_calls, budget.tool_calls),
        seconds=Spent(round(data.seconds, 3), budget.timeout_seconds),
        tokens=Spent(ledger.usage.input_tokens + ledger.usage.output_tokens, budget.tokens),
        cost_usd=Spent(ledger.usage.cost_usd, budget.cost_usd),
        iterations_exact=ledger.iteration_source != "bound",
        files_changed=data.files_changed,
        worktree=data.worktree_kind,
        diff_stat=data.diff_stat,
        open_points_source=source,
        open_points=points,
        next_step=_next_step(data, points),
        last_message=ledger.last_assistant_text,
        skipped_stages=[
            SkippedStage(list(cmd), f"skipped: run stopped by {data.stop.value}")
            for cmd in data.skipped_stages
        ],
        refused_call=_refused(data.refused_call) or _over_budget_call(data),
        in_flight=_in_flight(data),
        sandbox=data.sandbox,
        session_id=data.session_id,
        session_line=session_line(
            data.session_id, data.harness, data.host, data.ended_at.date().isoformat()
        ),
    )


def _refused(record: Refusal | None) -> CallPastBudget | None:
    if record is None:
        return None
    raw = record.tool_input
    try:
        data = json.loads(raw) if raw is not None else None
    except ValueError:
        data = raw
    name = record.tool or "a tool call"
    return CallPastBudget(
        tool=record.tool,
        tool_use_id=record.tool_use_id,
        call=_call_summary(name, data),
        number=record.calls_used,
        budget=record.call_budget,
        executed=False,
        stopped_by="gate",
        past_step=record.step if record.past_iterations else None,
        reason=record.reason,
        stopping_for=record.stop if record.reason == RUN_STOPPING else None,
    )


def _over_budget_call(data: ReportInput) -> CallPastBudget | None:
    """The call past the tool-call budget as the stream showed it (the stop came first).

    The gate never saw it (a refusal would be recorded: ``_refused``), so it is not
    said to be refused by the gate. With a per-run hook every call passes the gate
    before it runs, which would have refused this one: then it did not run."""
    ledger = data.ledger
    if data.stop is not RunStatus.TOOL_CALL_LIMIT or not ledger.open_calls:
        return None
    last = list(ledger.open_calls.values())[-1]
    return CallPastBudget(
        tool=last.name,
        tool_use_id=last.call_id,
        call=_call_summary(last.name, last.input),
        number=ledger.tool_calls,
        budget=data.budget.tool_calls,
        executed=False if data.gated else None,
        stopped_by="stream",
    )


def _in_flight(data: ReportInput) -> InFlight | None:
    """Model work the stop caught under way: begun past the limit, never acted on.

    Steps the stream showed, and requests the harness said it sent (Copilot), the
    ones the stream showed only after the stop included."""
    over = data.ledger.model_work - data.budget.iterations
    if over <= 0:
        return None
    return InFlight(
        model_steps_past_limit=over,
        after_stop=max(data.ledger.steps_after_stop, data.ledger.requests_after_stop),
        text=(
            f"{over} model step(s) past the limit of {data.budget.iterations} had already "
            f"begun when the stop landed (the harness had sent the request before tether's "
            f"stop reached it); the agent was stopped before acting on them further."
        ),
    )


def _refusal_words(refused: CallPastBudget) -> str:
    """How the call past the budget was stopped, as the record says it (never more)."""
    if refused.stopped_by == "gate":
        return "refused by the gate, not executed)"
    if refused.executed is False:
        return (
            "the run was stopped when it appeared in the stream, before the gate was asked; "
            "every call of this run passes the gate first, so it did not run)"
        )
    return "the run was stopped when it appeared in the stream; no hook could refuse it)"


def _next_step(data: ReportInput, points: list[str]) -> str:
    first = f" Start with: {points[0]}" if points else ""
    return (
        f"Review this report, then continue in a fresh session: "
        f"`tether run --follow-up {data.run_id} --profile {data.profile} --prompt ...`.{first}"
    )


def render_markdown(report: RunReport) -> str:
    lines = [f"# Progress report: run {report.run_id}", "", *_figures(report)]
    lines += sandbox_lines(report.sandbox)
    failure = report.failure
    if failure is not None and failure.stderr_tail:
        lines += ["", f"## The harness's stderr (last lines of {failure.stderr})", ""]
        lines += [f"    {line}" for line in failure.stderr_tail]
    lines += [
        "",
        "## Files changed since the run started",
        "",
    ]
    if report.files_changed:
        lines += [f"- {c['change']}: `{c['path']}`" for c in report.files_changed]
    else:
        lines.append("- none")
    if report.diff_stat:
        lines += ["", "```", report.diff_stat, "```"]
    lines += [
        "",
        "The work tree was left exactly as it is: no reset, no stash, no commit.",
        "",
        f"## Open points ({report.open_points_source})",
        "",
    ]
    lines += [f"- [ ] {p}" for p in report.open_points] or ["- none recorded"]
    lines += ["", "## Next step", "", report.next_step, "", "## Agent's last message", ""]
    last = report.last_message
    lines += [f"> {line}" for line in last.splitlines()] if last else ["(none)"]
    if report.skipped_stages:
        lines += ["", "## Post-run stages skipped", ""]
        lines += [f"- `{' '.join(s.command)}`: {s.reason}" for s in report.skipped_stages]
    lines += ["", report.session_line, ""]
    return "\n".join(lines)


def _figures(report: RunReport) -> list[str]:
    """The head of the report: who ran, why it stopped, each budget's figure."""
    it, tc, sec = report.iterations, report.tool_calls, report.seconds
    lines = [
        f"- unit: {report.unit or '(none given)'}",
        f"- profile: {report.profile} (harness {report.harness})",
        f"- stopped: {report.stop_reason_text} (`{report.stop_reason}`)",
        f"- iterations: {it.used} of {it.limit}"
        + ("" if report.iterations_exact else " (upper bound from the stream)"),
        f"- tool calls: {tc.used} of {tc.limit if tc.limit is not None else 'no limit'}",
        f"- seconds: {sec.used:.1f} of {sec.limit:g}",
    ]
    tokens, cost = report.tokens, report.cost_usd
    if tokens.used or tokens.limit is not None:
        limit = tokens.limit if tokens.limit is not None else "no limit"
        lines.append(f"- tokens (input + output): {tokens.used} of {limit}")
    if cost.used is not None or cost.limit is not None:
        used = f"{cost.used:.4f}" if cost.used is not None else "not reported"
        cost_limit = f"{cost.limit:g}" if cost.limit is not None else "no limit"
        lines.append(f"- cost (USD): {used} of {cost_limit}")
    if report.refused_call:
        lines.append(_refused_line(report, report.refused_call))
    if report.in_flight:
        lines.append(f"- in flight at the stop: {report.in_flight.text}")
    return lines


def _refused_line(report: RunReport, refused: CallPastBudget) -> str:
    """The refused call and why it was refused, as the gate's record says."""
    if refused.past_step is not None:
        why = (
            f"a call of model step {refused.past_step}, past the iteration limit of "
            f"{report.iterations.limit}"
        )
    elif refused.reason == RUN_STOPPING:
        why = f"made while the run was being stopped: {_stop_words(report, refused)}"
    elif refused.reason == SUPERVISOR_BEHIND:
        why = (
            "tether's supervisor had not read it from the agent's stream in time, and "
            "the gate lets no call through that the supervisor has not checked"
        )
    else:
        why = f"call {refused.number} of a budget of {refused.budget}"
    return f"- refused call: {refused.call} ({why}; " + _refusal_words(refused)


def _stop_words(report: RunReport, refused: CallPastBudget) -> str:
    """What the run being stopped had reached, as its stop status says."""
    stop = refused.stopping_for
    limit = {
        RunStatus.ITERATION_LIMIT.value: ("iteration", report.iterations.limit),
        RunStatus.TOOL_CALL_LIMIT.value: ("tool-call", report.tool_calls.limit),
    }.get(stop or "")
    if limit is not None:
        return f"it had reached its {limit[0]} limit" + (
            f" of {limit[1]}" if limit[1] is not None else ""
        )
    try:
        return REASON_TEXT[RunStatus(stop or "")]
    except (ValueError, KeyError):
        return "its stop had begun"


def sandbox_lines(sandbox: Findings | None) -> list[str]:
    """The report's lines on the sandbox: unsandboxed, hosts refused, processes killed."""
    if sandbox is None:
        return []
    if not sandbox.sandboxed:
        return [f"- sandbox: none, the agent ran unsandboxed ({sandbox.reason})"]
    lines = [f"- sandbox: {sandbox.mode}"]
    for host in sandbox.refused_hosts:
        lines.append(f"- network refused: {host.host}:{host.port} ({host.count} time(s))")
    kinds = (
        (sandbox.survivors_killed, "outlived the agent"),
        (sandbox.killed_at_stop, "at the stop"),
    )
    for procs, when in kinds:
        for proc in procs:
            lines.append(f"- killed ({when}): pid {proc.pid} `{' '.join(proc.argv)[:200]}`")
    for moved in sandbox.quarantined:
        lines.append(f"- protected path created by the run, moved aside: `{moved['path']}`")
    return lines
