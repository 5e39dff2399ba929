"""Fleet throughput: 12 projects x 5 units on 1, 2 and 4 workers, on a real PostgreSQL.

Each unit is one atomic run of the scripted agent that takes about 1 s (two
model steps of 0.5 s). Printed, for each worker count in the same run: the
wall time until every project has stopped (until the last project's closing
record was written: the benchmark sees it at its next look at the tables, up
to 0.2 s later, which is not counted), the speed-up against one worker,
and the fleet's overhead: the worker time that is not an agent's run (dequeue,
fetch of the kept clone, tick, commit and push, records, each project's
closing STOP tick, and idle workers at the end) against the runs' own time:
(wall x workers - sum of run times) / sum of run times. And the CPU time
per unit, counted rather than timed (so less at the mercy of the machine's
load): every process of the workers' whole lives (their start and stop
included: executors, agents, sandboxes, git) and of the PostgreSQL server
(the benchmark's own polling of the tables included), over the units that
ran an agent. The machine's load average is printed before and after: the
wall figures are only as good as the cores that were free.

The overhead is then split by where each worker spent its time outside runs,
each part against the runs' own time (the three add up to the overhead):
``start``, from the projects' adding to the worker's first run (the first
units' enqueue, dequeue, clone and tick: the clock starts once every worker
has said it is ready, which it says once DBOS polls its queue); ``between``,
from the end of one of the worker's runs to the start of its next (records,
push, the next tick);
``tail``, from the worker's last run to the end (the last units' push, the
closing look, and workers with nothing left while others finish: their
last units end up to a unit's length apart).

Goals: speed-up >= 3.2x at 4 workers; overhead <= 10% of the runs' own time.

    .venv/bin/python bench/fleet.py [--projects 12] [--units 5] [--workers 1,2,4]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


from tests.fleet.fleet_support import Fleet
from tests.support.fleet_projects import make_project
from tests.support.postgres import start_postgres

from tether.fleet.fleet_db import FleetDatabaseError, FleetStore
from tether.fleet.places import sqlalchemy_url


def _cpu_seconds(server_pid: int) -> float:
    """CPU seconds of this process's reaped children and of the database server's processes."""
    import os

    mine = os.times()
    fields = Path(f"/proc/{server_pid}/stat").read_text().rpartition(")")[2].split()
    # utime, stime, cutime, cstime: fields 14-17 of proc_pid_stat(5); the line after ")" starts at 3
    server = sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")
    return mine.children_user + mine.children_system + server


def one(
    root: Path, url: str, projects: int, units: int, workers: int, server_pid: int
) -> dict[str, float]:
    made = [
        make_project(root / "repos", f"p{i:02d}", units=units, steps=2, step_delay=0.5)
        for i in range(projects)
    ]
    fleet = Fleet(root / "machine", url)
    names = [p.name for p in made]
    cpu_before = _cpu_seconds(server_pid)
    try:
        # workers first, so that their start (DBOS launch, schema) is not timed: the clock
        # starts once each has said it is ready (its queue polled)
        names_of_workers = [f"w{n + 1}" for n in range(workers)]
        for w in names_of_workers:
            fleet.start_worker(w)
        store = _wait(url, lambda _store: _all_ready(fleet, names_of_workers))
        started_at = time.time()
        for p in made:
            store.add_project(p.name, p.url, "main")
        _wait(url, lambda st: _all_stopped(st, names), store)
        # the batch ends with the last project's closing record, not when the poll saw it
        wall = max(p.last_at or 0.0 for p in store.projects() if p.name in names) - started_at
        store.close()
    finally:
        fleet.stop_all()
    cpu = _cpu_seconds(server_pid) - cpu_before  # the server's backends of the workers are reaped
    store = FleetStore.open(sqlalchemy_url(url))
    run_times: list[float] = []
    by_worker: dict[str, list[tuple[float, float]]] = {}
    try:
        for p in made:
            for r in store.runs_of(p.name):
                began = datetime.fromisoformat(r.started_at or "").timestamp()
                ended = datetime.fromisoformat(r.ended_at or "").timestamp()
                run_times.append(ended - began)
                by_worker.setdefault(r.worker, []).append((began, ended))
    finally:
        store.close()
    return {
        "wall": wall,
        "run": statistics.median(run_times),
        "run_total": sum(run_times),
        "units": float(len(run_times)),
        "cpu": cpu,
        **_outside_runs(by_worker, started_at, started_at + wall, workers),
    }


def _outside_runs(
    by_worker: dict[str, list[tuple[float, float]]], start: float, end: float, workers: int
) -> dict[str, float]:
    """Worker seconds outside runs: before each worker's first, between its runs, after its last.

    A worker that ran nothing counts its whole time as ``tail``.
    """
    before = between = after = 0.0
    for spans in by_worker.values():
        spans.sort()
        before += spans[0][0] - start
        between += sum(spans[i + 1][0] - spans[i][1] for i in range(len(spans) - 1))
        after += end - spans[-1][1]
    after += (workers - len(by_worker)) * (end - start)
    return {"start": before, "between": between, "tail": after}


def _all_ready(fleet: Fleet, names: list[str]) -> bool:
    """Whether every worker has printed its ready line (its queue is polled)."""
    return all(f"fleet worker {name} ready" in fleet.log(name) for name in names)


def _all_stopped(store: FleetStore, names: list[str]) -> bool:
    """Whether every project said STOP; a project the fleet stopped ends the benchmark."""
    projects = {p.name: p for p in store.projects()}
    failed = [p for p in projects.values() if p.stopped_reason]
    if failed:
        raise SystemExit(f"project {failed[0].name} stopped: {failed[0].stopped_reason}")
    return all(
        n in projects and projects[n].worker is None and "STOP" in (projects[n].last_line or "")
        for n in names
    )


def _wait(
    url: str, done: Callable[[FleetStore], bool], store: FleetStore | None = None
) -> FleetStore:
    """Poll the fleet's tables in this process (a status subprocess would load the CPU)."""
    deadline = time.monotonic() + 1800
    while True:
        try:
            store = store or FleetStore.open(sqlalchemy_url(url))
            if done(store):
                return store
        except FleetDatabaseError:
            store = None  # the first worker has not created the database yet
        if time.monotonic() > deadline:
            raise SystemExit("timed out")
        time.sleep(0.2)


def _load() -> str:
    import os

    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--projects", type=int, default=12)
    parser.add_argument("--units", type=int, default=5)
    parser.add_argument("--workers", default="1,2,4")
    args = parser.parse_args()
    counts = [int(n) for n in args.workers.split(",")]
    before = _load()
    server = start_postgres(random.randint(20000, 40000))
    results: dict[int, dict[str, float]] = {}
    try:
        for n in counts:
            with tempfile.TemporaryDirectory(prefix="tether-bench-fleet-") as tmp:
                url = server.url(f"bench_{n}")
                results[n] = one(Path(tmp), url, args.projects, args.units, n, server.pid())
    finally:
        server.stop()
    base = results[counts[0]]["wall"]
    print(f"fleet: {args.projects} projects x {args.units} units, scripted agent ~1 s per unit")
    print(
        f"{'workers':>7} {'units':>5} {'wall s':>7} {'speed-up':>8} {'median run s':>12} "
        f"{'overhead':>8} {'start':>6} {'between':>7} {'tail':>5} {'CPU s/unit':>10}"
    )
    for n in counts:
        r = results[n]
        overhead = (r["wall"] * n - r["run_total"]) / r["run_total"]
        widths = (("start", 6), ("between", 7), ("tail", 5))
        parts = " ".join(f"{r[k] / r['run_total']:>{w}.1%}" for k, w in widths)
        print(
            f"{n:>7} {r['units']:>5.0f} {r['wall']:>7.1f} {base / r['wall']:>7.2f}x "
            f"{r['run']:>12.2f} {overhead:>7.1%} {parts} {r['cpu'] / r['units']:>10.2f}"
        )
    print("goals: speed-up >= 3.2x at 4 workers; overhead <= 10% of the runs' own time")
    print(f"load average (1, 5, 15 min) before: {before}; after: {_load()}")


if __name__ == "__main__":
    main()
