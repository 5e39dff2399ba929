"""What the fleet uses of DBOS beyond its public API still does what the fleet needs.

``tether.fleet.dbos_private.recover_executor`` wraps ``DBOS._recover_pending_workflows``:
given a dead executor's id, it re-enqueues that executor's pending workflows,
and a live executor then runs them from their last checkpoint. This runs it
for real (two processes, one killed with SIGKILL mid-workflow) and fails if
DBOS renames it, changes its parameters or its effect.

``wait_until_polled`` looks for DBOS's thread of a queue by its name: run for
real on a queue registered after the launch, it fails if DBOS names the
thread otherwise (the executor would then say it is ready five seconds late).
"""

from __future__ import annotations

import inspect
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from dbos import DBOS

PROGRAM = """
import sys, time
from pathlib import Path
from dbos import DBOS

role, url, folder = sys.argv[1], sys.argv[2], Path(sys.argv[3])

@DBOS.step(name="probe_step")
def first_step() -> str:
    (folder / f"step-by-{role}").write_text("x")
    return role

@DBOS.workflow(name="probe_workflow")
def probe() -> str:
    did = first_step()
    (folder / f"second-part-by-{role}").write_text(did)
    if role == "dead":
        time.sleep(3600)
    return did

DBOS(config={"name": "probe", "system_database_url": url, "executor_id": role,
             "application_version": "probe-1", "log_level": "ERROR"})
DBOS.launch()
if role == "dead":
    DBOS.start_workflow(probe)
    time.sleep(3600)
else:
    from tether.fleet.dbos_private import recover_executor
    print(recover_executor("dead"), flush=True)
    deadline = time.monotonic() + 60
    while not (folder / "second-part-by-alive").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    DBOS.destroy()
"""


QUEUE_PROGRAM = """
import sys, time
from dbos import DBOS
from tether.fleet.dbos_private import queue_is_polled, wait_until_polled

DBOS(config={"name": "probe", "system_database_url": sys.argv[1], "executor_id": "one",
             "application_version": "probe-1", "log_level": "ERROR"})
DBOS.launch()
before = queue_is_polled("probe_queue")
DBOS.register_queue("probe_queue", worker_concurrency=1, polling_interval_sec=0.1)
began = time.monotonic()
polled = wait_until_polled("probe_queue", 5.0)
waited = round(time.monotonic() - began, 2)
print(before, polled, waited, wait_until_polled("never_registered", 0.2))
DBOS.destroy()
"""


def _wait_for(path: Path, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.1)


def test_the_private_recovery_function_keeps_its_name_and_parameters() -> None:
    params = list(inspect.signature(DBOS._recover_pending_workflows).parameters)
    assert params == ["executor_ids"]


@pytest.mark.slow  # two DBOS executors as processes
def test_a_dead_executors_workflow_is_recovered_by_a_live_one(tmp_path: Path) -> None:
    program = tmp_path / "probe.py"
    program.write_text(PROGRAM, encoding="utf-8")
    url = f"sqlite:///{tmp_path / 'dbos.sqlite'}"
    dead = subprocess.Popen(
        [sys.executable, str(program), "dead", url, str(tmp_path)], start_new_session=True
    )
    try:
        _wait_for(tmp_path / "second-part-by-dead")
    finally:
        os.killpg(dead.pid, signal.SIGKILL)
        dead.wait()
    alive = subprocess.run(
        [sys.executable, str(program), "alive", url, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert alive.stdout.split()[0] == "1"  # one pending workflow of "dead" re-enqueued
    # run again by the live executor from its checkpoint: the step is not repeated
    assert (tmp_path / "second-part-by-alive").read_text() == "dead"
    assert not (tmp_path / "step-by-alive").exists()


@pytest.mark.slow  # a DBOS launch in a process of its own
def test_the_thread_of_a_queue_registered_after_the_launch_is_found(tmp_path: Path) -> None:
    program = tmp_path / "queue_probe.py"
    program.write_text(QUEUE_PROGRAM, encoding="utf-8")
    url = f"sqlite:///{tmp_path / 'dbos.sqlite'}"
    done = subprocess.run(
        [sys.executable, str(program), url], capture_output=True, text=True, timeout=120, check=True
    )
    before, polled, waited, never = done.stdout.split()
    assert (before, polled, never) == ("False", "True", "False"), done.stdout
    assert float(waited) < 5.0
