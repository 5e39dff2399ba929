"""Retries a person can unblock: the failure count starts again when a person acts.

A ticket whose runs keep stopping at the limit goes to USER/decision; the
person raises its budget and moves it back (with the real ``tether board``
commands), and the next tick runs it again. Cancellations are no failures.
A dry run predicts exactly what the real tick then dispatches, on generated
boards (real runs of the scripted agent, real store).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.loop.conftest import BASE_TOML, START, Project

from tether.board import State
from tether.clock import FakeClock
from tether.loop import tick
from tether.loop.tick import TickResult
from tether.loop.unfinished import attempt_basis
from tether.store import connect
from tether.store.runs import RunRow, insert_run


@pytest.mark.slow
@pytest.mark.parametrize("follow_up_iterations", [None, 2])
def test_a_parked_ticket_runs_again_after_the_person_raises_its_budget_and_moves_it_back(
    project: Project, follow_up_iterations: int | None
) -> None:
    if follow_up_iterations is not None:  # the raised budget wins over the loop's own
        key = 'source_timeout = "10s"\n'  # a key of [loop]; the source tables follow it
        extra = f"follow_up_iterations = {follow_up_iterations}\n"
        project.write_config(base=BASE_TOML.replace(key, key + extra, 1))
    ticket = project.add("Port the parser", body="Move parse() to the new API.\n", budget=3)
    for _ in range(3):
        done = project.tether("loop", "tick")
        assert done.returncode == 0, done.stderr
    parked = project.board.get(ticket.id)
    assert parked.location == "USER/decision"
    assert "give it a bigger budget (front matter `budget`), then move it back" in parked.body
    # exactly what the note says, as a person does it
    text = parked.path.read_text(encoding="utf-8")
    assert "budget: 3\n" in text
    parked.path.write_text(text.replace("budget: 3\n", "budget: 12\n"), encoding="utf-8")
    moved = project.tether("board", "move", ticket.id, "ACTIONABLE")
    assert moved.returncode == 0, moved.stderr
    dry = project.tether("loop", "tick", "--dry-run")
    assert "would start a follow-up of" in dry.stdout, dry.stdout
    again = project.tether("loop", "tick")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "ended unfinished" not in again.stdout
    after = project.board.get(ticket.id)
    assert after.state is State.DONE, again.stdout
    assert len(after.runs) == 4
    budgets = [_iteration_limit(project, run) for run in after.runs]
    first_follow_ups = [3, follow_up_iterations or 3, follow_up_iterations or 3]
    assert budgets == [*first_follow_ups, 12]


def _iteration_limit(project: Project, run_id: str) -> int:
    conn = connect(project.home)
    try:
        row = conn.execute("SELECT iteration_limit FROM runs WHERE id = ?", (run_id,)).fetchone()
    finally:
        conn.close()
    return int(row[0])


@pytest.mark.slow
def test_changing_the_text_of_an_actionable_ticket_starts_the_count_again(
    project: Project,
) -> None:
    ticket = project.add("Port the parser", body="Move parse() to the new API.\n", budget=3)
    loop = project.open()
    tick(loop)
    tick(loop)
    assert project.board.get(ticket.id).state is State.ACTIONABLE  # 2 of 3 failures
    path = project.board.get(ticket.id).path
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("new API.", "new API; only parse(), not dump()."), "utf-8")
    third = tick(loop)
    assert third.dispatched is not None and third.dispatched.decision == "follow-up"
    kept = project.board.get(ticket.id)
    assert kept.state is State.ACTIONABLE, third.dispatched.summary  # counted 1, not 3
    assert kept.front["retry_from"] == kept.runs[1]
    tick(loop)
    fifth = tick(loop)
    assert fifth.dispatched is not None
    assert project.board.get(ticket.id).location == "USER/decision", fifth.dispatched.summary


def _run_row(project: Project, run_id: str, status: str, unit: str, minute: int) -> RunRow:
    run_dir = project.home / "runs" / run_id
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "report.md").write_text(f"# Report of {run_id}\n\nNot finished.\n", "utf-8")
    return RunRow(
        id=run_id,
        profile="scripted",
        harness="scripted",
        argv=["scripted"],
        started_at=f"2026-03-01T08:{minute:02d}:00.000000Z",
        run_dir=str(run_dir),
        status=status,
        unit=unit,
        cwd=str(project.root.resolve()),
    )


def test_cancelled_runs_are_no_failures(project: Project) -> None:
    ticket = project.add("Long job")
    conn = connect(project.home)
    ids = [f"r-cancel-{n}" for n in range(3)]
    for n, run_id in enumerate(ids):
        insert_run(conn, _run_row(project, run_id, "cancelled", f"ticket:{ticket.id}", n))
    conn.close()
    project.board.update(ticket.id, front={"runs": ids, "last_run": ids[-1]})
    loop = project.open()
    result = tick(loop)
    assert result.dispatched is not None
    assert result.dispatched.decision == "follow-up", result.dispatched.summary
    assert result.dispatched.follow_up_of == ids[-1]
    assert project.board.get(ticket.id).state is State.DONE


# --- the dry run predicts the real tick ----------------------------------------

STATUSES = ("completed", "iteration_limit", "cancelled", "timeout", "failed")


@st.composite
def boards(draw: st.DrawFn) -> dict[str, Any]:
    tickets = draw(
        st.lists(
            st.fixed_dictionaries(
                {
                    "state": st.sampled_from(["ACTIONABLE", "BLOCKED", "WAITING", "INBOX"]),
                    "priority": st.sampled_from(["P1", "P2", "P3"]),
                    "runs": st.lists(st.sampled_from(STATUSES), max_size=4),
                    "budget": st.sampled_from([None, 3, 12, 10_000, "lots"]),
                    "retry_from": st.booleans(),
                    "edited": st.booleans(),
                    "title": st.sampled_from(["Job", "Deploy the site", "Log in to the console"]),
                }
            ),
            min_size=1,
            max_size=4,
        )
    )
    return {"tickets": tickets}


def _decision(result: TickResult) -> tuple[Any, ...]:
    work = result.level1.work
    d = result.dispatched
    return (
        work.source if work else None,
        work.ticket.id if work and work.ticket else None,
        d.decision if d else None,
        d.unit if d else None,
        d.follow_up_of if d else None,
    )


@pytest.mark.slow
@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(board=boards())
def test_the_dry_run_decides_what_the_real_tick_dispatches(
    tmp_path_factory: pytest.TempPathFactory, tether_home: Path, board: dict[str, Any]
) -> None:
    root = tmp_path_factory.mktemp("proj")
    home = tmp_path_factory.mktemp("home")
    project = Project(root=root, home=home, clock=FakeClock(START))
    project.write_config(
        '\n[profiles.quick]\nharness = "scripted"\n'
        'args = ["--format", "claude-code", "--steps", "4"]\ndefault = true\n'
    )
    project.board.ensure()
    conn = connect(home)
    for n, spec in enumerate(board["tickets"]):
        front: dict[str, Any] = {}
        state = State(spec["state"])
        reason = None
        if state is State.BLOCKED:
            reason, front = "dependency", {"blocked_by": "a check", "check": ["true"]}
        elif state is State.WAITING:
            reason, front = "scheduled", {"until": "2026-03-01"}
        if spec["budget"] is not None:
            front["budget"] = spec["budget"]
        title = f"{spec['title']} {n}"
        ticket = project.add(title, state, reason, priority=spec["priority"], **front)
        ids = []
        for m, status in enumerate(spec["runs"]):
            run_id = f"r-{n}-{m}"
            insert_run(conn, _run_row(project, run_id, status, f"ticket:{ticket.id}", n * 5 + m))
            ids.append(run_id)
        if ids and state is not State.INBOX:
            extra: dict[str, Any] = {"runs": ids, "last_run": ids[-1]}
            if spec["retry_from"] and len(ids) > 1:
                extra["retry_from"] = ids[0]
            extra["attempt_basis"] = "0" * 16 if spec["edited"] else None
            updated = project.board.update(ticket.id, front=extra)
            if not spec["edited"]:
                project.board.update(ticket.id, front={"attempt_basis": attempt_basis(updated)})
    conn.close()
    loop = project.open()
    try:
        predicted = tick(loop, dry_run=True)
        real = tick(loop)
        assert _decision(predicted) == _decision(real), (
            predicted.dispatched.summary if predicted.dispatched else None,
            real.dispatched.summary if real.dispatched else None,
        )
        assert predicted.signal is real.signal
    finally:
        loop.close()
