"""The fleet on its embedded SQLite default: one machine, no database server."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.fleet.fleet_support import Fleet, all_stopped, wait_for_live_run
from tests.support.fleet_projects import board_of, make_project

from tether.board import State


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_two_workers_on_the_embedded_sqlite_default(tmp_path: Path) -> None:
    projects = [make_project(tmp_path / "repos", name, units=2) for name in ("left", "right")]
    fleet = Fleet(tmp_path / "machine", database=None)
    try:
        for p in projects:
            fleet.tether("fleet", "add", p.name, "--repo", p.url)
        fleet.start_worker("a")
        fleet.start_worker("b")
        status = fleet.wait_until("both projects stopped", all_stopped(["left", "right"]))
        assert status["database"].startswith("sqlite:///")
        assert (fleet.home / "fleet" / "fleet.db").is_file()
        for p in projects:
            board = board_of(p, tmp_path).load()
            assert {t.title for t in board.tickets if t.state is State.DONE} == set(p.titles)
        assert all(p["units_done"] == 2 for p in status["projects"])
    finally:
        fleet.stop_all()


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_pause_and_resume(tmp_path: Path) -> None:
    project = make_project(tmp_path / "repos", "paused", units=2)
    fleet = Fleet(tmp_path / "machine", database=None)
    try:
        fleet.tether("fleet", "add", project.name, "--repo", project.url)
        fleet.tether("fleet", "pause", project.name)
        fleet.start_worker("a")
        status = fleet.wait_until("the worker is alive", lambda s: bool(s["workers"]))
        assert status["projects"][0]["state"] == "paused"
        assert status["projects"][0]["units_done"] == 0
        fleet.tether("fleet", "resume", project.name)
        status = fleet.wait_until("the project stopped", all_stopped([project.name]))
        assert status["projects"][0]["units_done"] == 2
    finally:
        fleet.stop_all()


@pytest.mark.slow
def test_bad_input_is_one_line_and_a_documented_exit_code(tmp_path: Path) -> None:
    fleet = Fleet(tmp_path / "machine", database=None)
    project = make_project(tmp_path / "repos", "twice", units=1)
    bad_name = fleet.tether("fleet", "add", "../escape", "--repo", project.url, check=False)
    assert bad_name.returncode == 2
    assert bad_name.stderr.count("\n") == 1 and "project name" in bad_name.stderr
    # a repository git cannot read, or one without the branch: refused, nothing added
    for repo, branch, said in (
        ("not-a-url", "main", "cannot read repository not-a-url"),
        (f"file://{tmp_path}/missing.git", "main", "does not appear to be a git repository"),
        (project.url, "elsewhere", "has no branch 'elsewhere'"),
    ):
        bad = fleet.tether("fleet", "add", "bad", "--repo", repo, "--branch", branch, check=False)
        assert bad.returncode == 2, bad.stderr
        assert bad.stderr.count("\n") == 1 and said in bad.stderr, bad.stderr
    assert "bad" not in fleet.tether("fleet", "list").stdout
    fleet.tether("fleet", "add", "twice", "--repo", project.url)
    again = fleet.tether("fleet", "add", "twice", "--repo", project.url, check=False)
    assert again.returncode == 2 and "already in the fleet" in again.stderr
    unknown = fleet.tether("fleet", "pause", "nobody", check=False)
    assert unknown.returncode == 2 and "no project 'nobody'" in unknown.stderr
    no_server = Fleet(
        tmp_path / "other",
        database=f"postgresql://postgres@/fleet?host={tmp_path}/no-server&port=5999",
    )
    unreachable = no_server.tether("fleet", "status", check=False)
    assert unreachable.returncode == 3
    assert unreachable.stderr.count("\n") == 1 and "fleet database" in unreachable.stderr
    for garbage in ("garbage", "mysql://u@h/db"):
        odd = Fleet(tmp_path / f"odd-{garbage[:5]}", database=garbage)
        for command in (("fleet", "status"), ("fleet", "worker", "--name", "w")):
            done = odd.tether(*command, check=False)
            assert done.returncode == 3, done.stderr
            assert done.stderr.count("\n") == 1 and "fleet database" in done.stderr


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_project_removed_and_added_again_runs_anew(tmp_path: Path) -> None:
    project = make_project(tmp_path / "repos", "again", units=1)
    fleet = Fleet(tmp_path / "machine", database=None)
    try:
        fleet.tether("fleet", "add", project.name, "--repo", project.url)
        fleet.start_worker("a")
        fleet.wait_until("the first chain stopped", all_stopped([project.name]))
        fleet.tether("fleet", "remove", project.name)
        # a new ticket arrives on the branch; the project comes back under the same name
        more = make_project(tmp_path / "more", "again", units=2)
        fleet.tether("fleet", "add", project.name, "--repo", more.url)
        status = fleet.wait_until(
            "the new incarnation's units",
            lambda s: (
                bool(s["projects"])
                and s["projects"][0]["units_done"] == 2
                and all_stopped([project.name])(s)
            ),
        )
        assert status["projects"][0]["repo"] == more.url
        board = board_of(more, tmp_path).load()
        assert {t.title for t in board.tickets if t.state is State.DONE} == set(more.titles)
    finally:
        fleet.stop_all()


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_an_executor_killed_mid_run_is_started_again_and_takes_up_its_unit(
    tmp_path: Path,
) -> None:
    """DBOS's own recovery: the worker starts its executor again under the same name."""
    import os
    import signal

    import psutil

    from tether.fleet.fleet_db import FleetStore
    from tether.fleet.places import sqlalchemy_url

    project = make_project(tmp_path / "repos", "relaunch", units=1, steps=8, step_delay=1.0)
    fleet = Fleet(tmp_path / "machine", database=None)
    try:
        fleet.tether("fleet", "add", project.name, "--repo", project.url)
        worker = fleet.start_worker("only")
        url = f"sqlite:///{fleet.home / 'fleet' / 'fleet.db'}"
        run_id = wait_for_live_run(url, project.name, events=2)
        executor = psutil.Process(worker.pid).children()[0]
        os.kill(executor.pid, signal.SIGKILL)
        fleet.wait_until("the project stopped", all_stopped([project.name]), timeout=300)
        store = FleetStore.open(sqlalchemy_url(url))
        runs = store.runs_of(project.name)
        store.close()
        assert [r.status for r in runs if r.run_id == run_id] == ["abandoned"], runs
        assert [r.status for r in runs if r.follow_up_of == run_id] == ["completed"], runs
        assert "executor only ended (exit -9); starting it again" in fleet.log("only")
        assert "went silent" not in fleet.log("only")  # nobody else was needed
        assert worker.poll() is None  # the worker itself never stopped
    finally:
        fleet.stop_all()
