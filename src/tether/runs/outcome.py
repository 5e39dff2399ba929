"""What a run leaves behind once its agent is gone: report, post-run stages, record."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tether.config import Config, Profile
from tether.core.exit_codes import ExitCode
from tether.events.accounting import Ledger
from tether.fs import atomic_write_json, atomic_write_text
from tether.gate.runstop import read_refusal
from tether.outbox import Collected, RunFacts, collect
from tether.run_status import RunStatus
from tether.runs import run_report as reports
from tether.runs import worktree
from tether.runs.budget import Budget
from tether.runs.failure import Failure, failure_of
from tether.runs.record import RunPaths, row_to_record
from tether.runs.sandboxing import Findings
from tether.runs.stages import StageEnd, run_post_stages
from tether.store import state_db
from tether.store.runs import RunRow, get_run, update_run


@dataclass
class RunOutcome:
    run_id: str
    stop: RunStatus
    ledger: Ledger
    row: RunRow  # the run's record as the store holds it after the end
    # the report (report.json) of a run that did not complete, as written
    report: reports.RunReport | None = None
    paths: RunPaths | None = field(default=None, repr=False)
    # From the event that decided a limit stop to the agent's process group being gone.
    stop_latency: float | None = None
    # what the run's sandbox saw, or why it had none (runs.sandboxing)
    sandbox: Findings | None = None
    # what the run proposed (``tether outbox``), collected after it ended
    proposals: Collected | None = None
    # why a failed run failed (its error event or the end of its stderr)
    failure: Failure | None = None

    @property
    def stop_text(self) -> str:
        """The stop in words, with the harness's reason when the run failed."""
        words = reports.REASON_TEXT[self.stop]
        return words + (self.failure.words() if self.failure is not None else "")

    @property
    def pending_proposals(self) -> list[str]:
        """Ids of this run's proposals that wait for a person's decision."""
        return self.proposals.pending if self.proposals is not None else []

    def record(self) -> dict[str, Any]:
        """The run's record as ``run.json`` holds it (``tether run --json`` prints it)."""
        return row_to_record(self.row, self.ledger)

    @property
    def failed_stage(self) -> StageEnd | None:
        """The post-run stage that failed, if one did."""
        stages = (StageEnd.parse(stage) for stage in self.row.stages or ())
        return next((stage for stage in stages if stage.status == "failed"), None)

    @property
    def stages_passed(self) -> bool:
        """No post-run stage failed (true when none ran)."""
        return self.failed_stage is None

    @property
    def exit_code(self) -> ExitCode:
        if self.stop is RunStatus.COMPLETED and not self.stages_passed:
            return ExitCode.CHECK_FAILED
        return self.stop.exit_code


@dataclass(frozen=True)
class Ending:
    """How a run ended, as the supervisor saw it."""

    config: Config
    profile: Profile
    budget: Budget
    unit: str | None
    run_id: str
    paths: RunPaths
    ledger: Ledger
    stop: RunStatus
    how: str  # "exited", "sigterm", "sigkill"
    agent_status: int | None
    seconds: float
    cwd: Path
    before: worktree.Snapshot
    session_id: str
    stop_latency: float | None
    # a per-run hook asked the gate before every tool call
    gated: bool = False
    # what the sandbox saw (runs.sandboxing.findings), or why there was none
    sandbox: Findings | None = None


def finish_run(conn: Any, end: Ending) -> RunOutcome:
    """Write the report (every run that did not complete: limit, cancel, failure) or run
    the post-run stages, then the record. So any ended run can be followed up."""
    ended = datetime.now(UTC)
    failure = (
        failure_of(end.ledger, end.agent_status, end.paths.stderr)
        if end.stop is RunStatus.FAILED
        else None
    )
    report = _write_report(end, ended, failure) if end.stop is not RunStatus.COMPLETED else None
    stages: list[dict[str, Any]] | None = None
    exit_code = end.stop.exit_code
    stop_reason = f"{end.stop.value} ({end.how})" if end.how != "exited" else end.stop.value
    if failure is not None and failure.reason:
        stop_reason = f"{stop_reason}: {failure.reason}"
    if end.stop is RunStatus.COMPLETED and end.profile.post_run:
        results = run_post_stages(end.profile.post_run, end.cwd)
        atomic_write_json(end.paths.stages, [r.as_dict() for r in results])
        stages = [r.end().as_dict() for r in results]
        failed = next((r for r in results if r.failed), None)
        if failed is not None:
            exit_code = ExitCode.CHECK_FAILED
            stop_reason = f"{stop_reason}; post-run stage failed: {' '.join(failed.command)}"
    ledger = end.ledger
    fields: dict[str, Any] = dict(
        status=end.stop.value,
        stop_reason=stop_reason,
        exit_code=int(exit_code),
        stages=stages,
        agent_exit_status=end.agent_status,
        iterations=ledger.iterations,
        tool_calls=ledger.tool_calls,
        tool_results=ledger.tool_results,
        open_tool_calls=ledger.open_tool_calls,
        usage=ledger.to_dict()["usage"],
        ended_at=ended.isoformat(),
        harness_session_id=ledger.session_id,
    )
    with state_db.transaction(conn):
        update_run(conn, end.run_id, **fields)
    row = get_run(conn, end.run_id)
    atomic_write_json(end.paths.record, row_to_record(row, ledger))
    return RunOutcome(
        run_id=end.run_id,
        stop=end.stop,
        ledger=ledger,
        row=row,
        report=report,
        paths=end.paths,
        stop_latency=end.stop_latency,
        proposals=collect_proposals(conn, end, report is not None),
        failure=failure,
        sandbox=end.sandbox,
    )


def collect_proposals(conn: Any, end: Ending, reported: bool) -> Collected:
    """The run's proposal files, checked and recorded in ``tether.db`` (the agent is gone)."""
    if not any(end.paths.outbox.glob("*.proposal.json")):
        return Collected()
    final = end.ledger.final_message
    facts = RunFacts(
        run_id=end.run_id,
        unit=end.unit,
        cwd=end.cwd,
        report=str(end.paths.report_md) if reported else (final[:4000] if final else None),
        diff_summary=worktree.diff_stat(end.cwd, since=end.before),
    )
    return collect(conn, end.config, end.paths.outbox, facts)


def _write_report(end: Ending, ended: datetime, failure: Failure | None) -> reports.RunReport:
    after = worktree.snapshot(end.cwd, exclude=end.config.home, since=end.before)
    report = reports.build(
        reports.ReportInput(
            run_id=end.run_id,
            unit=end.unit,
            profile=end.profile.name,
            harness=end.profile.harness,
            stop=end.stop,
            budget=end.budget,
            ledger=end.ledger,
            seconds=end.seconds,
            files_changed=worktree.changes(end.before, after),
            worktree_kind=after.kind,
            diff_stat=worktree.diff_stat(end.cwd, since=end.before),
            skipped_stages=end.profile.post_run,
            session_id=end.ledger.session_id or end.session_id,
            ended_at=ended,
            refused_call=read_refusal(str(end.paths.root)),
            gated=end.gated,
            failure=failure,
            sandbox=end.sandbox,
        )
    )
    atomic_write_json(end.paths.report_json, report.as_dict())
    atomic_write_text(end.paths.report_md, reports.render_markdown(report))
    return report


def write_recovered_report(row: RunRow, ledger: Ledger) -> None:
    """The report of a run whose supervisor died, from what its events recorded.

    The files changed compare the work tree now with the snapshot the run kept
    of it at its start (``worktree-start.json``); without one (a run started by
    an older tether) they are what git shows against HEAD, changes from before
    the run included, and the report's ``worktree`` says so. The counts are the
    recount of ``events.jsonl``; the time is the run's record (its end is when
    its agent was last heard of, not when the recovery ran).
    """
    paths = RunPaths(Path(row.run_dir))
    cwd = Path(row.cwd) if row.cwd else None
    before = worktree.load(paths.worktree_start)
    files: list[dict[str, str]] = []
    kind = "unknown (recovered)"
    diff = None
    if cwd is not None and cwd.is_dir():
        after = worktree.snapshot(cwd, exclude=paths.root.parent.parent, since=before)
        diff = worktree.diff_stat(cwd, since=before)
        if before is not None:
            files, kind = worktree.changes(before, after), after.kind
        elif after.kind == "git":
            files = worktree.changes(worktree.Snapshot("git"), after)
            kind = "git (no snapshot from the run's start: changes made before it included)"
    ended = datetime.fromisoformat(row.ended_at) if row.ended_at else datetime.now(UTC)
    started = datetime.fromisoformat(row.started_at)
    report = reports.build(
        reports.ReportInput(
            run_id=row.id,
            unit=row.unit,
            profile=row.profile,
            harness=row.harness,
            stop=RunStatus.ABANDONED,
            budget=Budget(
                iterations=row.iteration_limit or ledger.iterations or 1,
                tool_calls=row.tool_call_limit,
                timeout_seconds=row.timeout_seconds or 1.0,
            ),
            ledger=ledger,
            seconds=max(0.0, (ended - started).total_seconds()),
            files_changed=files,
            worktree_kind=kind,
            diff_stat=diff,
            skipped_stages=[],
            session_id=ledger.session_id or row.session_id,
            ended_at=ended,
        )
    )
    atomic_write_json(paths.report_json, report.as_dict())
    atomic_write_text(paths.report_md, reports.render_markdown(report))
