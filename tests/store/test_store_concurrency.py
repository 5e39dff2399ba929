"""Several real processes write the same fresh database at once: no lock errors, no lost update."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from tether.core.migrations import schema_version
from tether.store import connect
from tether.store.migrations import MIGRATIONS
from tether.store.runs import get_run, list_runs

WORKERS = 4
ROUNDS = 300

WORKER = r"""
import sys, time
from pathlib import Path
from tether.store import connect, transaction
from tether.store.runs import RunRow, insert_run, update_run

home, name, ready, go = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3]), Path(sys.argv[4])
rounds = int(sys.argv[5])
ready.touch()
deadline = time.monotonic() + 60
while not go.exists():
    if time.monotonic() > deadline:
        sys.exit("never got the go signal")
    time.sleep(0.001)
conn = connect(home)  # every worker migrates the fresh file at the same moment
with transaction(conn):
    conn.execute(
        "INSERT OR IGNORE INTO runs (id, profile, harness, argv, status, started_at, run_dir) "
        "VALUES ('shared', 'p', 'h', '[]', 'running', '2025-01-01T00:00:00.000000Z', 'd')"
    )
# a second barrier: whoever migrated first does not get a head start on the writing
(ready.parent / f"connected-{name}").touch()
while len(list(ready.parent.glob("connected-*"))) < int(sys.argv[6]):
    if time.monotonic() > deadline:
        sys.exit("the other writers never connected")
    time.sleep(0.001)
began = time.monotonic()
for i in range(rounds):
    run_id = f"{name}-{i:04d}"
    insert_run(conn, RunRow(id=run_id, profile="p", harness="scripted", argv=[name, str(i)],
                            started_at=f"2025-01-01T00:00:{i % 60:02d}.000000Z", run_dir="d"))
    # read-modify-write: lost updates would show in the final count
    with transaction(conn):
        (value,) = conn.execute("SELECT iterations FROM runs WHERE id = 'shared'").fetchone()
        conn.execute("UPDATE runs SET iterations = ? WHERE id = 'shared'", (value + 1,))
    update_run(conn, run_id, tool_calls=i + 1, status="completed")
print(began, time.monotonic())  # CLOCK_MONOTONIC is shared by all processes
conn.close()
"""


def test_concurrent_writers_are_exact(tmp_path: Path) -> None:
    home = tmp_path / "home"
    go = tmp_path / "go"
    procs = []
    for n in range(WORKERS):
        ready = tmp_path / f"ready-{n}"
        procs.append(
            subprocess.Popen(
                [
                    sys.executable,
                    "-c",
                    WORKER,
                    str(home),
                    f"w{n}",
                    str(ready),
                    str(go),
                    str(ROUNDS),
                    str(WORKERS),
                ],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    deadline = time.monotonic() + 60
    while not all((tmp_path / f"ready-{n}").exists() for n in range(WORKERS)):
        assert time.monotonic() < deadline, "workers did not start"
        assert all(p.poll() is None for p in procs), [p.communicate() for p in procs]
        time.sleep(0.01)
    go.touch()
    results = [p.communicate(timeout=90) for p in procs]
    for proc, (_, err) in zip(procs, results, strict=True):
        assert "database is locked" not in err
        assert proc.returncode == 0, err
    spans = [tuple(map(float, out.split())) for out, _ in results]
    # the writers really ran at the same time (each overlaps another one)
    for index, (start, end) in enumerate(spans):
        others = spans[:index] + spans[index + 1 :]
        assert any(s < end and start < e for s, e in others), spans

    conn = connect(home)
    try:
        assert schema_version(conn) == len(MIGRATIONS)
        assert get_run(conn, "shared").iterations == WORKERS * ROUNDS
        rows = [r for r in list_runs(conn, limit=None) if r.id != "shared"]
        assert len(rows) == WORKERS * ROUNDS
        assert all(r.status == "completed" for r in rows)
        assert sum(r.tool_calls for r in rows) == WORKERS * ROUNDS * (ROUNDS + 1) // 2
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        conn.close()
