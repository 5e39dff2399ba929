"""``cancel_all_runs``: every run of the process ends as cancelled, however its agent died.

A fleet worker that lost its lease sets the flag and kills its agents' process
groups at once, from another thread, without waiting for the supervisor's own
stop (its lease may be about to run out). The supervisor then usually sees the
agent's stream end before it looks at the flag again; the run must still be
recorded as cancelled (the work was stopped, not failed), with its report, so
that it is followed up.
"""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path

import pytest
from tests.runs.conftest import Project, poll

from tether.run_status import RunStatus
from tether.runs.outcome import RunOutcome
from tether.runs.supervisor import RunRequest, allow_runs, cancel_all_runs, supervise
from tether.store import state_db
from tether.store.runs import running_runs


def _agent_group(home: Path) -> int | None:
    conn = state_db.connect(home)
    try:
        rows = running_runs(conn)
    finally:
        conn.close()
    return next((row.agent_pgid for row in rows if row.agent_pgid), None)


def _run_cut_short(project: Project) -> RunOutcome:
    """A run in a thread of this process, cancelled and killed the way a fleet worker does."""
    got: list[RunOutcome] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            got.append(supervise(RunRequest(prompt="go", iterations=90, cwd=project.root)))
        except BaseException as exc:  # re-raised in the test's thread
            errors.append(exc)

    thread = threading.Thread(target=work)
    start = len(project.executed())
    thread.start()
    try:
        assert poll(lambda: len(project.executed()) >= start + 2, timeout=60)
        group = _agent_group(project.home)
        assert group is not None
        cancel_all_runs()
        os.killpg(group, signal.SIGKILL)  # right after the flag, as the fleet's keeper does
        thread.join(timeout=60)
    finally:
        allow_runs()
        thread.join(timeout=60)
    assert not errors, errors
    return got[0]


@pytest.mark.parametrize("attempt", range(3))
def test_a_run_whose_agent_is_killed_right_after_cancel_all_runs_is_cancelled(
    project: Project, attempt: int
) -> None:
    project.write_config(["--steps", "500", "--step-delay", "0.05"])
    outcome = _run_cut_short(project)
    assert outcome.stop is RunStatus.CANCELLED, outcome.row.stop_reason
    assert outcome.row.status == "cancelled"
    assert outcome.report is not None and outcome.report.stop_reason == "cancelled"
    assert outcome.failure is None


def test_runs_started_after_allow_runs_go_on(project: Project) -> None:
    project.write_config(["--steps", "2", "--step-delay", "0.01"])
    cancel_all_runs()
    allow_runs()
    outcome = supervise(RunRequest(prompt="go", iterations=10, cwd=project.root))
    assert outcome.stop is RunStatus.COMPLETED
