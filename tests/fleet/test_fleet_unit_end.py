"""A unit's push and record come after its workflow on the queue has ended.

The executor's next unit (another project's) does not wait for them; the
project's own next unit does: its unit stays held until the record, and its
successor is enqueued only then. A worker that dies in between leaves the
push and the record to the worker that takes its units over, done once.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest
from tests.fleet.fleet_support import Fleet, all_stopped
from tests.support.fleet_projects import board_of, make_project

from tether.board import State


def _hold_pushes(bare: Path, entered: Path, release: Path) -> None:
    """The remote's pre-receive hook: says a push arrived, then holds it until ``release``."""
    hook = bare / "hooks" / "pre-receive"
    hook.write_text(
        f"#!/bin/sh\ntouch '{entered}'\nwhile [ ! -e '{release}' ]; do sleep 0.1; done\n",
        encoding="utf-8",
    )
    hook.chmod(0o755)


def _wait_for(path: Path, fleet: Fleet, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        if time.monotonic() > deadline:
            raise AssertionError(f"{path.name} never appeared:\n{fleet.log('a')[-3000:]}")
        time.sleep(0.1)


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_another_projects_unit_runs_while_a_unit_is_pushed(tmp_path: Path) -> None:
    held = make_project(tmp_path / "repos", "held", units=2)
    other = make_project(tmp_path / "repos", "other", units=1)
    entered, release = tmp_path / "push-entered", tmp_path / "push-release"
    _hold_pushes(held.bare, entered, release)
    # a long lease, so that the push held by the hook stays within its timeout (0.4 of it)
    fleet = Fleet(tmp_path / "machine", database=None, dead_after=120.0)
    try:
        fleet.start_worker("a")  # one executor: one unit's run at a time
        fleet.tether("fleet", "add", held.name, "--repo", held.url)
        _wait_for(entered, fleet)
        fleet.tether("fleet", "add", other.name, "--repo", other.url)
        status = fleet.wait_until("the other project stopped", all_stopped([other.name]))
        by_name = {p["name"]: p for p in status["projects"]}
        # held's first unit is still its holder, unrecorded: its second unit has not started
        assert by_name[held.name]["worker"] == "a"
        assert by_name[held.name]["last_line"] is None
        assert by_name[held.name]["units_done"] == 0
        assert by_name[other.name]["units_done"] == 1
        release.touch()
        status = fleet.wait_until("the held project stopped", all_stopped([held.name]))
        by_name = {p["name"]: p for p in status["projects"]}
        assert by_name[held.name]["units_done"] == 2
        board = board_of(held, tmp_path).load()
        assert {t.title for t in board.tickets if t.state is State.DONE} == set(held.titles)
    finally:
        release.touch()
        fleet.stop_all()


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_worker_killed_while_its_unit_is_pushed_is_finished_once_by_another(
    tmp_path: Path,
) -> None:
    held = make_project(tmp_path / "repos", "held", units=1)
    entered, release = tmp_path / "push-entered", tmp_path / "push-release"
    _hold_pushes(held.bare, entered, release)
    fleet = Fleet(tmp_path / "machine", database=None)
    try:
        first = fleet.start_worker("a")
        fleet.tether("fleet", "add", held.name, "--repo", held.url)
        _wait_for(entered, fleet)
        os.killpg(first.pid, signal.SIGKILL)  # the worker, its executor and the push with them
        first.wait()
        release.touch()
        fleet.start_worker("b")
        status = fleet.wait_until("the project stopped", all_stopped([held.name]), timeout=300)
        assert status["projects"][0]["units_done"] == 1
        log = "\n".join(held.remote_log("%B"))
        assert log.count("Tether-Fleet-Unit:") == 1  # pushed once, by the worker that took it
        board = board_of(held, tmp_path).load()
        assert {t.title for t in board.tickets if t.state is State.DONE} == set(held.titles)
        assert "went silent" in fleet.log("b")
    finally:
        release.touch()
        fleet.stop_all()
