"""Exact counting under many concurrent processes, and after kill -9 mid-call.

Each worker is its own process running the gate's plain mode (``tick``) in a
loop: every call opens its own connection and does its own BEGIN IMMEDIATE,
exactly as a ``tether-gate tick`` process does, minus the interpreter start
(which has nothing to do with counting and would make 3200 calls take a minute
on two cores). One test also runs the real console script concurrently.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from tests.gate.gate_support import holding_gate, query, run_gate

from tether.gate.counter import session_status

WORKER = r"""
import io, json, os, sys
from tether.gate import hook
session, calls = sys.argv[1], int(sys.argv[2])
sys.stdin.buffer.read(1)  # the start line: every worker begins together
sys.stderr = io.StringIO()  # refusal messages, not needed here
codes = {}
for _ in range(calls):
    code = hook.main(["tick", "--session", session, "--tool", "Bash"])
    codes[code] = codes.get(code, 0) + 1
sys.__stdout__.write(json.dumps(codes) + "\n")
"""


def _run_workers(env: dict[str, str], session: str, workers: int, calls: int) -> Counter[int]:
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, session, str(calls)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        for _ in range(workers)
    ]
    for proc in procs:  # release them all at once
        assert proc.stdin is not None
        proc.stdin.write(b"g")
        proc.stdin.close()
    totals: Counter[int] = Counter()
    for proc in procs:
        assert proc.stdout is not None and proc.stderr is not None
        with proc.stdout, proc.stderr:
            out, err = proc.stdout.read(), proc.stderr.read()
        assert proc.wait(timeout=120) == 0, err.decode()
        totals.update({int(k): v for k, v in json.loads(out).items()})
    return totals


@pytest.mark.slow
@pytest.mark.parametrize(
    ("workers", "calls", "budget"),
    [(16, 200, 1000), (16, 50, 60)],
    ids=["16x200-budget-1000", "16x50-budget-60"],
)
def test_concurrent_ticks_are_counted_exactly(
    tether_home: Path, env_for: object, workers: int, calls: int, budget: int
) -> None:
    env = env_for(TETHER_GATE_BUDGET=str(budget))  # type: ignore[operator]
    totals = _run_workers(env, "crowd", workers, calls)
    total = workers * calls
    assert totals[0] == budget
    assert totals[30] == total - budget
    assert set(totals) == {0, 30}
    status = session_status(tether_home, "crowd")
    assert status.calls_used == total
    assert status.locked is True
    # Every counted call left exactly one event, with its own position in line.
    assert query(tether_home, "SELECT COUNT(*), COUNT(DISTINCT calls_used) FROM events") == [
        (total, total)
    ]
    assert query(tether_home, "SELECT COUNT(*) FROM events WHERE decision = 'allow'") == [(budget,)]


@pytest.mark.slow
def test_concurrent_console_script_calls_are_exact(
    tether_home: Path, env_for: object, gate_exe: str
) -> None:
    env = env_for(TETHER_GATE_BUDGET="25")  # type: ignore[operator]

    def one(_: int) -> int:
        return run_gate(gate_exe, ["tick", "--session", "procs"], env).returncode

    with ThreadPoolExecutor(max_workers=8) as pool:
        codes = Counter(pool.map(one, range(40)))
    assert codes == Counter({0: 25, 30: 15})
    assert session_status(tether_home, "procs").calls_used == 40


def _wait_for(path: Path, deadline_s: float = 30.0) -> None:
    deadline = time.monotonic() + deadline_s
    while not path.exists():
        if time.monotonic() > deadline:
            raise AssertionError(f"{path} did not appear")
        time.sleep(0.005)


def test_kill_9_inside_the_transaction_loses_only_that_call(
    tether_home: Path, env_for: object, gate_exe: str, tmp_path: Path
) -> None:
    env = env_for(TETHER_GATE_BUDGET="60")  # type: ignore[operator]
    for _ in range(3):
        assert run_gate(gate_exe, ["tick", "--session", "crash"], env).returncode == 0
    marker = tmp_path / "holding"
    victim = subprocess.Popen(
        [*holding_gate(marker), "tick", "--session", "crash"],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _wait_for(marker)  # it has counted call 4 and holds the write lock, uncommitted
    os.kill(victim.pid, signal.SIGKILL)
    assert victim.wait(timeout=30) == -signal.SIGKILL
    # The lock died with it; the next calls go straight through, numbered on from 3.
    for _ in range(5):
        assert run_gate(gate_exe, ["tick", "--session", "crash"], env).returncode == 0
    assert session_status(tether_home, "crash").calls_used == 8
    assert query(tether_home, "SELECT calls_used FROM events ORDER BY id") == [
        (n,) for n in range(1, 9)
    ]
    assert query(tether_home, "PRAGMA integrity_check") == [("ok",)]


@pytest.mark.slow
def test_kill_9_at_random_moments_under_load_keeps_counter_and_log_equal(
    tether_home: Path, env_for: object, gate_exe: str
) -> None:
    env = env_for(TETHER_GATE_BUDGET="1000")  # type: ignore[operator]
    rng = random.Random(4)
    finished = killed = 0
    procs: list[subprocess.Popen[bytes]] = []
    for round_ in range(6):
        procs = [
            subprocess.Popen(
                [gate_exe, "tick", "--session", "chaos"],
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            for _ in range(8)
        ]
        # Kill half of them, each at a random moment of its ~35 ms run (start-up,
        # counting, committing, answering): the moment is the variable here.
        for proc in procs[round_ % 2 :: 2]:
            time.sleep(rng.uniform(0, 0.03))
            proc.send_signal(signal.SIGKILL)
        for proc in procs:
            code = proc.wait(timeout=30)
            if code == -signal.SIGKILL:
                killed += 1
            else:
                assert code == 0
                finished += 1
    used = session_status(tether_home, "chaos").calls_used
    # Each finished call is counted; a killed one is counted at most once.
    assert finished <= used <= finished + killed
    assert query(tether_home, "SELECT COUNT(*), MAX(calls_used) FROM events") == [(used, used)]
    assert query(tether_home, "PRAGMA integrity_check") == [("ok",)]
    assert run_gate(gate_exe, ["tick", "--session", "chaos"], env).returncode == 0
    assert session_status(tether_home, "chaos").calls_used == used + 1


FIRST_CALLS = r"""
import json, sys
from tether.gate import gate_db as db
homes = sys.argv[1:]
failures = []
for home in homes:
    sys.stdin.buffer.read(1)  # one start line per fresh home: every worker opens it together
    try:
        db.connect(home).close()
    except db.GateDatabaseError as exc:
        failures.append(str(exc))
    sys.stdout.write("d")
    sys.stdout.flush()
sys.stdout.write(json.dumps(failures) + "\n")
"""


def test_first_calls_on_a_new_gate_file_all_get_in(tmp_path: Path) -> None:
    # Creating the file and switching it to WAL is where concurrent first calls
    # meet: one that was turned away would fail open and go uncounted.
    homes = [str(tmp_path / f"home{n}") for n in range(40)]
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", FIRST_CALLS, *homes],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for _ in range(8)
    ]
    for _ in homes:
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.write(b"g")
            proc.stdin.flush()
        for proc in procs:  # all done with this home before the next is released
            assert proc.stdout is not None
            assert proc.stdout.read(1) == b"d"
    failures: list[str] = []
    for proc in procs:
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        proc.stdin.close()
        failures += json.loads(proc.stdout.readline())
        assert proc.wait(timeout=60) == 0, proc.stderr.read().decode()
        proc.stdout.close()
        proc.stderr.close()
    assert failures == []
    for home in homes:
        assert query(Path(home), "PRAGMA journal_mode") == [("wal",)]
