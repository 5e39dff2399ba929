"""PostgreSQL stopped for 20 s in the middle of a unit, N times: what the fleet did each time.

Each round: a fresh database on one real PostgreSQL server, two workers whose
tether homes share nothing (two "machines"), one project of two units whose
runs take about 8 s (the scripted agent, 8 steps of 1 s). Once the first run
is in progress (its events reached the database) the server is stopped for
20 s (``pg_ctl stop -m immediate``) and started again. Printed per round:

- overlap: whether two runs of the project ever ran at the same time;
- once: every unit's ticket done, by exactly one completed run, none
  cancelled or abandoned;
- records: the signal lines are units 1, 2 and the closing STOP, each once;
- goes on: the project ended with its closing STOP, nobody was taken over;
- lines: the lines the two workers printed (ready, gone, back, each).

    .venv/bin/python bench/fleet_outage.py [--rounds 10] [--outage 20]
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.fleet.fleet_support import Fleet, all_stopped, ever_two_at_once, wait_for_live_run
from tests.support.fleet_projects import board_of, make_project
from tests.support.postgres import Postgres, start_postgres

from tether.board import State
from tether.fleet.fleet_db import FleetStore
from tether.fleet.places import sqlalchemy_url


def one_round(root: Path, server: Postgres, n: int, outage: float) -> dict[str, object]:
    url = server.url(f"outage_{n}")
    project = make_project(root / "repos", "steady", units=2, steps=8, step_delay=1.0)
    machines = [Fleet(root / f"machine-{m}", url, dead_after=30.0) for m in "ab"]
    names = ("w1", "w2")
    try:
        machines[0].tether("fleet", "add", project.name, "--repo", project.url)
        for fleet, name in zip(machines, names, strict=True):
            fleet.start_worker(name)
        wait_for_live_run(url, project.name, events=2)
        server.halt()
        time.sleep(outage)
        server.restart()
        back = time.monotonic()
        machines[0].wait_until("the project stopped", all_stopped([project.name]), timeout=600)
        settled = time.monotonic() - back
    finally:
        for fleet in machines:
            fleet.stop_all()
    store = FleetStore.open(sqlalchemy_url(url))
    runs = store.runs_of(project.name)
    lines = store.signal_lines(project.name)
    store.close()
    overlap = ever_two_at_once(runs)
    board = board_of(project, root).load()
    done = {t.title for t in board.tickets if t.state is State.DONE} == set(project.titles)
    said = [
        line
        for fleet, name in zip(machines, names, strict=True)
        for line in fleet.log(name).splitlines()
        if line.strip()
    ]
    taken_over = any("went silent" in line or "lease" in line for line in said)
    return {
        "overlap": overlap,
        "once": done and [r.status for r in runs] == ["completed", "completed"],
        "records": [seq for seq, *_ in lines] == [1, 2, 3],
        "goes_on": bool(lines) and "STOP (exhausted)" in lines[-1][2] and not taken_over,
        "lines": len(said),
        "settled": settled,
        "said": said,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--outage", type=float, default=20.0)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="tether-pg-bench-outage-"))
    server = start_postgres(random.randint(40001, 50000), folder)
    print(f"fleet outage: PostgreSQL stopped {args.outage:.0f} s mid-unit, {args.rounds} rounds")
    print(f"{'round':>5} {'overlap':>7} {'once':>5} {'records':>7} {'goes on':>7} {'lines':>5} "
          f"{'done after back s':>17}")  # fmt: skip
    good = 0
    try:
        for n in range(1, args.rounds + 1):
            with tempfile.TemporaryDirectory(prefix="tether-bench-outage-") as tmp:
                r = one_round(Path(tmp), server, n, args.outage)
            ok = not r["overlap"] and r["once"] and r["records"] and r["goes_on"]
            good += bool(ok)
            print(
                f"{n:>5} {'yes' if r['overlap'] else 'no':>7} {'yes' if r['once'] else 'NO':>5} "
                f"{'kept' if r['records'] else 'LOST':>7} {'yes' if r['goes_on'] else 'NO':>7} "
                f"{r['lines']:>5} {r['settled']:>17.1f}",
                flush=True,
            )
            if not ok:
                print("  " + "\n  ".join(str(line) for line in r["said"]))  # type: ignore[attr-defined]
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)
    print(f"{good} of {args.rounds} rounds: no overlap, every unit once, no record lost, went on")


if __name__ == "__main__":
    main()
