"""Fleet throughput: 12 projects x 5 units on 1, 2 and 4 workers, on a real PostgreSQL.

Each unit is one atomic run of the scripted agent that takes about 1 s (two
model steps of 0.5 s). Printed, for each worker count in the same run: the
wall time until every project has stopped, the speed-up against one worker,
and the queue overhead per unit: the time a project's unit cycle takes
(dequeue, fresh clone, tick, run, commit and push, record) beyond the run
itself, as a share of the run's own time.

Goals (issue text): speed-up >= 3.2x at 4 workers; overhead <= 5% of a unit.

    .venv/bin/python bench/fleet.py [--projects 12] [--units 5] [--workers 1,2,4]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import itertools

from tests.fleet.fleet_support import Fleet, all_stopped

from tether.fleet.places import sqlalchemy_url
from tether.fleet.store import FleetStore
from tether.testing.fleet import make_project
from tether.testing.postgres import start_postgres


def one(root: Path, url: str, projects: int, units: int, workers: int) -> dict[str, float]:
    made = [
        make_project(root / "repos", f"p{i:02d}", units=units, steps=2, step_delay=0.5)
        for i in range(projects)
    ]
    fleet = Fleet(root / "machine", url)
    for p in made:
        fleet.tether("fleet", "add", p.name, "--repo", p.url)
    start = time.monotonic()
    try:
        for n in range(workers):
            fleet.start_worker(f"w{n + 1}")
        fleet.wait_until("all stopped", all_stopped([p.name for p in made]), timeout=1800)
        wall = time.monotonic() - start
    finally:
        fleet.stop_all()
    store = FleetStore.open(sqlalchemy_url(url))
    run_times: list[float] = []
    cycles: list[float] = []
    try:
        for p in made:
            for r in store.runs_of(p.name):
                began = datetime.fromisoformat(r.started_at or "")
                ended = datetime.fromisoformat(r.ended_at or "")
                run_times.append((ended - began).total_seconds())
            ats = [at for at in _signal_times(store, p.name)]
            # the unit cycles between two consecutive CONTINUE lines of one project
            cycles += [b - a for a, b in itertools.pairwise(ats)]
    finally:
        store.close()
    run = statistics.median(run_times)
    cycle = statistics.median(cycles)
    return {"wall": wall, "run": run, "cycle": cycle, "units": float(len(run_times))}


def _signal_times(store: FleetStore, project: str) -> list[float]:
    import sqlalchemy as sa

    from tether.fleet.store import signals

    with store.begin() as conn:
        rows = conn.execute(
            sa.select(signals.c.at, signals.c.line)
            .where(signals.c.project == project)
            .order_by(signals.c.id)
        ).all()
    return [r.at for r in rows if r.line.startswith("TETHER-LOOP: CONTINUE")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--projects", type=int, default=12)
    parser.add_argument("--units", type=int, default=5)
    parser.add_argument("--workers", default="1,2,4")
    args = parser.parse_args()
    counts = [int(n) for n in args.workers.split(",")]
    server = start_postgres(random.randint(20000, 40000))
    results: dict[int, dict[str, float]] = {}
    try:
        for n in counts:
            with tempfile.TemporaryDirectory(prefix="tether-bench-fleet-") as tmp:
                results[n] = one(Path(tmp), server.url(f"bench_{n}"), args.projects, args.units, n)
    finally:
        server.stop()
    base = results[counts[0]]["wall"]
    print(f"fleet: {args.projects} projects x {args.units} units, scripted agent ~1 s per unit")
    print(
        f"{'workers':>7} {'units':>5} {'wall s':>7} {'speed-up':>8} {'run s':>6} "
        f"{'cycle s':>7} {'overhead':>8}"
    )
    for n in counts:
        r = results[n]
        overhead = (r["cycle"] - r["run"]) / r["run"]
        print(
            f"{n:>7} {r['units']:>5.0f} {r['wall']:>7.1f} {base / r['wall']:>7.2f}x "
            f"{r['run']:>6.2f} {r['cycle']:>7.2f} {overhead:>7.0%}"
        )
    print("goals: speed-up >= 3.2x at 4 workers; overhead (cycle - run) / run <= 5%")


if __name__ == "__main__":
    main()
