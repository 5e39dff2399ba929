"""The loop and the outbox: a ticket whose run proposed waits in USER/approval naming the
proposals; a person's approval moves it on, a rejection sends it back with the reason."""

from __future__ import annotations

import json

import pytest
from tests.outbox.conftest import Repo

from tether.board import State


def _tick(repo: Repo) -> str:
    done = repo.tether("loop", "tick")
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def _only_proposal(repo: Repo) -> dict[str, object]:
    listed = json.loads(repo.person("outbox", "list", "--state", "proposed", "--json").stdout)
    assert len(listed) == 1, listed
    found: dict[str, object] = listed[0]
    return found


@pytest.mark.slow
def test_a_ticket_that_proposed_waits_and_the_last_approval_moves_it_to_done(repo: Repo) -> None:
    repo.agent_does(
        "echo fix >> README.md && git commit -qam 'Fix the README'",
        "tether outbox propose push -m 'the fix is ready'",
    )
    ticket = repo.project.add("Fix the README and share it", body="Fix it, then share it.\n")
    out = _tick(repo)
    proposal = _only_proposal(repo)
    pid = str(proposal["id"])
    assert f"proposed {pid} (push 1 commit" in out and "→ USER/approval" in out
    waiting = repo.project.board.get(ticket.id)
    assert waiting.location == "USER/approval"
    assert waiting.front["proposals"] == [pid]
    assert waiting.needs is not None and f"tether outbox approve {pid}" in waiting.needs
    assert proposal["ticket"] == ticket.id and proposal["unit"] == f"ticket:{ticket.id}"
    # a ticket approval is not how a proposal is decided
    wrong = repo.person("board", "approve", ticket.id)
    assert wrong.returncode == 2 and wrong.stderr.count("\n") == 1, wrong.stderr
    assert f"waits for proposals of its run ({pid})" in wrong.stderr
    assert repo.project.board.get(ticket.id).location == "USER/approval"
    # the person's bundle names what waits
    repo.project.all_sources_ready()
    stop = repo.tether("loop", "tick")
    assert stop.returncode == 14, stop.stdout + stop.stderr
    assert pid in stop.stdout

    approved = repo.person("outbox", "approve", pid)
    assert approved.returncode == 0, approved.stdout + approved.stderr
    assert f"{ticket.id} → DONE" in approved.stdout
    done = repo.project.board.get(ticket.id)
    assert done.state is State.DONE and "proposals" not in done.front
    assert f"proposal {pid} (push) approved by" in done.body and "carried out" in done.body
    assert repo.remote_head() == repo.head()


@pytest.mark.slow
def test_a_rejection_sends_the_ticket_back_with_the_reason_for_the_next_run(repo: Repo) -> None:
    repo.agent_does(
        "git commit -q --allow-empty -m 'Bump'",
        "tether outbox propose push",
    )
    ticket = repo.project.add("Bump and share", body="Bump it.\n")
    _tick(repo)
    pid = str(_only_proposal(repo)["id"])
    rejected = repo.person("outbox", "reject", pid, "--reason", "squash the commits first")
    assert rejected.returncode == 0, rejected.stderr
    assert f"{ticket.id} → ACTIONABLE" in rejected.stdout
    back = repo.project.board.get(ticket.id)
    assert back.location == "ACTIONABLE"
    (feedback,) = back.front["outbox_feedback"]
    assert feedback["reason"] == "squash the commits first" and feedback["state"] == "rejected"

    repo.agent_does("true")  # the next run does not propose again
    out = _tick(repo)
    assert f"on {ticket.id} completed" in out and "→ DONE" in out, out
    runs = sorted((repo.project.home / "runs").iterdir())
    prompt = (runs[-1] / "prompt.md").read_text()
    assert "## A person's answer to the last run's proposals" in prompt
    assert f"{pid} (push 1 commit" in prompt and "squash the commits first" in prompt
    assert "outbox_feedback" not in repo.project.board.get(ticket.id).front


@pytest.mark.slow
def test_more_work_after_the_approval_and_a_batch_of_two(repo: Repo) -> None:
    repo.agent_does(
        "git commit -q --allow-empty -m 'One'",
        "tether outbox propose push",
        "git branch side && tether outbox propose push --ref side:side",
    )
    ticket = repo.project.add("Release prep", body="Prepare.\n", after_approval="continue")
    _tick(repo)
    listed = json.loads(repo.person("outbox", "list", "--json").stdout)
    assert len(listed) == 2
    board = repo.project.board
    assert sorted(board.get(ticket.id).front["proposals"]) == sorted(p["id"] for p in listed)
    first = repo.person("outbox", "approve", listed[0]["id"])
    assert first.returncode == 0, first.stderr
    assert f"{ticket.id} still waits for {listed[1]['id']}" in first.stdout
    assert board.get(ticket.id).location == "USER/approval"
    second = repo.person("outbox", "approve", listed[1]["id"])
    assert second.returncode == 0, second.stderr
    assert f"{ticket.id} → ACTIONABLE (more work follows)" in second.stdout
    assert board.get(ticket.id).location == "ACTIONABLE"


def test_board_approve_still_works_for_a_decision_ticket(repo: Repo) -> None:
    ticket = repo.project.add(
        "Pick a licence", state=State.USER, reason="approval", needs="a choice: MIT or Apache"
    )
    done = repo.person("board", "approve", ticket.id, "--note", "MIT")
    assert done.returncode == 0, done.stderr
    assert repo.project.board.get(ticket.id).location == "ACTIONABLE"


@pytest.mark.slow
def test_what_an_abandoned_run_proposed_is_collected_and_its_ticket_waits(repo: Repo) -> None:
    import os
    import signal
    import subprocess
    import time

    from tests.outbox.conftest import TETHER

    repo.agent_does(
        "git commit -q --allow-empty -m 'Ready'",
        "tether outbox propose push",
        "sleep 60",
    )
    ticket = repo.project.add("Share it", body="Share the work.\n")
    loop = subprocess.Popen(
        [TETHER, "loop", "run"],
        cwd=repo.root,
        env=repo.project.env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    runs = repo.project.home / "runs"
    deadline = time.monotonic() + 60
    while not list(runs.glob("*/outbox/*.proposal.json")):
        assert time.monotonic() < deadline, "the run never proposed"
        time.sleep(0.1)
    os.kill(loop.pid, signal.SIGKILL)  # the supervisor only; its agent sleeps on
    loop.wait()
    (run_id,) = [p.name for p in runs.iterdir()]

    repo.project.all_sources_ready()
    tick = repo.tether("loop", "tick", "--json")
    assert tick.returncode == 14, tick.stdout + tick.stderr  # user-only: the proposal waits
    report = tick.stdout[: tick.stdout.rindex("}") + 1]
    assert json.loads(report)["recovered"] == [run_id]
    proposal = _only_proposal(repo)
    assert proposal["run"] == run_id and proposal["ticket"] == ticket.id
    waiting = repo.project.board.get(ticket.id)
    assert waiting.location == "USER/approval" and waiting.front["proposals"] == [proposal["id"]]
    assert f"run {run_id} was abandoned" in waiting.body
    approved = repo.person("outbox", "approve", str(proposal["id"]))
    assert approved.returncode == 0, approved.stdout + approved.stderr
    # the abandoned run did not complete: its ticket goes back for a follow-up
    assert f"{ticket.id} → ACTIONABLE (more work follows)" in approved.stdout
    assert repo.remote_head() == repo.head()
