"""The fleet on its embedded SQLite default: one machine, no database server."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.fleet.fleet_support import Fleet, all_stopped

from tether.board import State
from tether.testing.fleet import board_of, make_project


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


def test_bad_input_is_one_line_and_a_documented_exit_code(tmp_path: Path) -> None:
    fleet = Fleet(tmp_path / "machine", database=None)
    bad_name = fleet.tether("fleet", "add", "../escape", "--repo", "file:///x", check=False)
    assert bad_name.returncode == 2
    assert bad_name.stderr.count("\n") == 1 and "project name" in bad_name.stderr
    fleet.tether("fleet", "add", "twice", "--repo", "file:///x")
    again = fleet.tether("fleet", "add", "twice", "--repo", "file:///y", check=False)
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
