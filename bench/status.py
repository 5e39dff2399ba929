"""``tether status`` and ``tether dashboard`` with 10,000 runs in the store.

Builds a tether home with ``--runs`` runs (default 10,000: all statuses, three
still running, reports on the limit stops) and, beside the project without a
board, a second project whose board has ``--tickets`` tickets (default 1,000,
``bench/board.py``'s ``make_board``), then measures, in this one run:

- ``tether --help`` as a new process (the baseline), and ``tether status`` and
  ``tether status --json`` as new processes, in the project without a board and
  in the one with the board: best and median of ``--repeats`` wall-clock times
  (the targets: status <= 150 ms and <= 2x ``tether --help``, 10,000 runs), and
  the best CPU time of each (less moved by other work on a shared machine).
  With the board three ways: as usual (the board's parses come from the cache
  file in the tether home, ``tether.board.stored``, written by an earlier
  process), after one ticket was edited (that file parsed again, the cache file rewritten),
  and with that file removed before each run (every ticket parsed again and the
  file written whole). Then one status process phase by phase (where the time
  goes).
- the dashboard's runs page: the server's work for one page (``runs_page``:
  the query, the count, the rows) in-process, first page, a deep page and a
  filtered page, best and median; and the same pages over HTTP against a real
  ``tether dashboard`` process (loopback round-trip included). Target <= 100 ms.
- a long run's page: a run whose ``events.jsonl`` is ``--long-mb`` MB (default
  40; Claude Code stream lines), ``/api/runs/ID`` over HTTP: the first answer
  (a cold parse), the same again, the same with its ETag (a 304), and after
  the run appended 1 MB (only the new lines are parsed); time and bytes.
- the dashboard's idle cost: CPU time of the server process over ``--idle``
  seconds with one page open (an SSE stream) and nothing changing, as a
  percentage of one core. Target <= 1 %.

Prints figures and ratios; asserts nothing (the machine may be shared).

    .venv/bin/python bench/status.py [--runs 10000] [--tickets 1000] [--repeats 9] [--idle 20]
                                     [--long-mb 40]
"""

from __future__ import annotations

import argparse
import http.client
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository, for bench.*

from bench.board import make_board

from tether.board.stored import FOLDER, RACY_NS
from tether.runs.record import RunPaths
from tether.store import connect, transaction
from tether.store.runs import RunRow, insert_run

STATUSES = ("completed", "iteration_limit", "tool_call_limit", "timeout", "failed", "cancelled")
HARNESSES = ("claude-code", "codex", "copilot", "pi", "scripted")


def make_home(home: Path, runs: int) -> None:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    conn = connect(home)
    try:
        with transaction(conn):
            for n in range(runs):
                running = n >= runs - 3
                status = "running" if running else STATUSES[n % len(STATUSES)]
                run_id = f"r-bench-{n:06d}"
                folder = RunPaths.for_run(home, run_id)
                started = start + timedelta(minutes=n)
                insert_run(
                    conn,
                    RunRow(
                        id=run_id,
                        unit=f"T-{n % 400}",
                        profile="default",
                        harness=HARNESSES[n % len(HARNESSES)],
                        argv=["--steps", "9"],
                        status=status,
                        stop_reason=None if running else status,
                        exit_code=None if running else 20,
                        iteration_limit=10,
                        tool_call_limit=40,
                        timeout_seconds=900.0,
                        iterations=n % 11,
                        tool_calls=n % 41,
                        usage={"input_tokens": 100 * n, "output_tokens": 7 * n},
                        started_at=started.isoformat(),
                        ended_at=None if running else (started + timedelta(seconds=50)).isoformat(),
                        run_dir=str(folder.root),
                    ),
                )
                if n >= runs - 40:
                    folder.root.mkdir(parents=True, exist_ok=True)
                    if status.endswith("limit"):
                        folder.report_md.write_text("# Progress report\n", encoding="utf-8")
    finally:
        conn.close()


LONG_RUN = "r-bench-long-run"


def events_lines(megabytes: float, start: int = 0) -> bytes:
    """Claude Code stream lines (a text, a tool call, its result per step) of about that size."""
    import json

    out: list[bytes] = []
    size, n = 0, start
    pad = "x" * 120
    while size < megabytes * 1_000_000:
        n += 1
        for event in (
            {
                "type": "assistant",
                "message": {
                    "id": f"m{n}",
                    "content": [
                        {"type": "text", "text": pad},
                        {"type": "tool_use", "id": f"c{n}", "name": "Bash", "input": {"c": "ls"}},
                    ],
                    "usage": {"input_tokens": 1000, "output_tokens": 50},
                },
            },
            {
                "type": "user",
                "message": {
                    "content": [{"type": "tool_result", "tool_use_id": f"c{n}", "content": pad}]
                },
            },
        ):
            line = (json.dumps(event) + "\n").encode()
            out.append(line)
            size += len(line)
    return b"".join(out)


def make_long_run(home: Path, megabytes: float) -> Path:
    folder = RunPaths.for_run(home, LONG_RUN)
    folder.root.mkdir(parents=True, exist_ok=True)
    folder.events.write_bytes(events_lines(megabytes))
    conn = connect(home)
    try:
        with transaction(conn):
            insert_run(
                conn,
                RunRow(
                    id=LONG_RUN,
                    unit="T-long",
                    profile="default",
                    harness="claude-code",
                    argv=[],
                    status="running",
                    iteration_limit=1_000_000,
                    tool_call_limit=1_000_000,
                    timeout_seconds=86_400.0,
                    started_at=datetime(2026, 1, 1, tzinfo=UTC).isoformat(),
                    run_dir=str(folder.root),
                ),
            )
    finally:
        conn.close()
    return folder.events


def timed_process(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    return timed_with_cpu(argv, env, cwd)[0]


def timed_with_cpu(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """Wall-clock seconds of a new process, and the CPU seconds (user + system) it used:
    on a shared machine the second moves less with the others' load."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def series(measure: Callable[[], float], repeats: int) -> tuple[float, float]:
    values = [measure() for _ in range(repeats)]
    return min(values), statistics.median(values)


def ms(value: float) -> str:
    return f"{value * 1000:7.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--tickets", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--idle", type=float, default=20.0)
    parser.add_argument("--long-mb", type=float, default=40.0)
    args = parser.parse_args()

    tether = str(Path(sys.executable).parent / "tether")
    with tempfile.TemporaryDirectory(prefix="tether-bench-status-") as tmp:
        root = Path(tmp)
        home = root / "home"
        t0 = time.perf_counter()
        make_home(home, args.runs)
        print(f"store: {args.runs} runs made in {time.perf_counter() - t0:.1f} s")
        long_events = make_long_run(home, args.long_mb)
        env = {**os.environ, "TETHER_HOME": str(home), "TETHER_USER_CONFIG": str(root / "none")}
        env.pop("COLUMNS", None)
        # as installed: bytecode cached (the warm-up run writes it where it may)
        env.pop("PYTHONDONTWRITEBYTECODE", None)

        plain = root / "project"
        plain.mkdir()
        boarded = root / "project-with-board"
        make_board(boarded / "tickets", args.tickets)
        board_made = time.monotonic()
        edited = min((boarded / "tickets" / "ACTIONABLE").glob("*.md"))
        (boarded / "tether.toml").write_text("", encoding="utf-8")
        print(f"board: {args.tickets} tickets in {boarded / 'tickets'}")

        # a file younger than this is never put in the board's cache file: let them age
        time.sleep(max(0.0, RACY_NS / 1e9 + 0.1 - (time.monotonic() - board_made)))
        # warm the file cache and the bytecode once (and write the board's cache file)
        for argv in ([tether, "--help"], [tether, "status"]):
            timed_process(argv, env, plain)
            timed_process(argv, env, boarded)
        # interleaved, so that a busy moment of the shared machine hits all alike
        cases = {
            "help": ([tether, "--help"], plain, "tether --help (baseline)"),
            "status": ([tether, "status"], plain, "tether status"),
            "json": ([tether, "status", "--json"], plain, "tether status --json"),
            "board": ([tether, "status"], boarded, f"  + board of {args.tickets} tickets"),
            "board-json": ([tether, "status", "--json"], boarded, "  + board, --json"),
            "board-edit": ([tether, "status"], boarded, "  + board, a ticket edited"),
            "board-cold": ([tether, "status"], boarded, "  + board, no cache file"),
        }
        runs: dict[str, list[float]] = {name: [] for name in cases}
        cpus: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(args.repeats):
            for name, (argv, cwd, _label) in cases.items():
                if name == "board-edit":
                    with edited.open("a", encoding="utf-8") as notes:
                        notes.write("- a note\n")
                if name == "board-cold":
                    shutil.rmtree(home / FOLDER, ignore_errors=True)
                wall, cpu = timed_with_cpu(argv, env, cwd)
                runs[name].append(wall)
                cpus[name].append(cpu)
        help_best, help_median = min(runs["help"]), statistics.median(runs["help"])
        print(f"\nnew process, {args.repeats} runs each   best        median")
        print(f"  {cases['help'][2]:<26} {ms(help_best)}  {ms(help_median)}")
        for name, (_argv, _cwd, label) in cases.items():
            if name == "help":
                continue
            best, median = min(runs[name]), statistics.median(runs[name])
            print(
                f"  {label:<26} {ms(best)}  {ms(median)}   "
                f"ratio to --help: best {best / help_best:.2f}x, median {median / help_median:.2f}x"
                f"   (targets <= 150 ms, <= 2x)"
            )

        help_cpu = min(cpus["help"])
        print(f"\nthe same processes, CPU time (user + system), best of {args.repeats}")
        print(f"  {cases['help'][2]:<26} {ms(help_cpu)}")
        for name, (_argv, _cwd, label) in cases.items():
            if name != "help":
                best = min(cpus[name])
                print(f"  {label:<26} {ms(best)}   ratio to --help: {best / help_cpu:.2f}x")

        # where a status process spends its time: one fresh process, phase by phase
        breakdown = subprocess.run(
            [sys.executable, "-c", PHASES], env=env, cwd=boarded, capture_output=True, text=True
        )
        print("\none `tether status` process, phase by phase (wall clock, first use):")
        print(breakdown.stdout.rstrip() or breakdown.stderr)

        # the runs page: the server's work, in-process
        from tether.dashboard.data import runs_page
        from tether.store.state_db import connect_reader

        conn = connect_reader(home)
        assert conn is not None
        pages = {
            "first page": {},
            "page 150 (deep)": {"page": "150"},
            "harness+status filter": {"harness": "codex", "status": "timeout", "page": "3"},
            "stop-reason+date filter": {"stop": "iteration", "since": "2026-01-03"},
        }
        print("\ndashboard runs page, server work in-process (runs_page)   best        median")
        for label, query in pages.items():
            best, median = series(partial(_timed, partial(runs_page, conn, query)), args.repeats)
            print(f"  {label:<46} {ms(best)}  {ms(median)}   (target <= 100 ms)")
        conn.close()

        # the same over HTTP against a real server process
        proc = subprocess.Popen(
            [tether, "dashboard", "--port", "0"],
            env=env,
            cwd=root,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        try:
            assert proc.stdout is not None
            url = proc.stdout.readline().strip().split(" ", 2)[2]
            hostport, token = url.removeprefix("http://").split("/?token=")
            host, port = hostport.split(":")

            def get(path: str) -> float:
                sep = "&" if "?" in path else "?"
                client = http.client.HTTPConnection(host, int(port), timeout=30)
                start = time.perf_counter()
                client.request("GET", f"{path}{sep}token={token}")
                answer = client.getresponse()
                answer.read()
                took = time.perf_counter() - start
                client.close()
                assert answer.status == 200, answer.status
                return took

            get("/api/runs")  # first request: imports
            print(
                "\nover HTTP to `tether dashboard` (loopback included)          best        median"
            )
            base = series(lambda: get("/static/vendor/uPlot.LICENSE"), args.repeats)
            print(f"  a 1 KB static file (baseline)                  {ms(base[0])}  {ms(base[1])}")
            for label, path in (
                ("/api/runs (first page)", "/api/runs"),
                ("/api/runs?page=150", "/api/runs?page=150"),
                (
                    "/api/runs?harness=codex&status=timeout",
                    "/api/runs?harness=codex&status=timeout",
                ),
            ):
                best, median = series(partial(get, path), args.repeats)
                print(f"  {label:<46} {ms(best)}  {ms(median)}   (target <= 100 ms)")

            def fetch(path: str, etag: str | None = None) -> tuple[float, int, int, str]:
                client = http.client.HTTPConnection(host, int(port), timeout=120)
                headers = {"Authorization": f"Bearer {token}"}
                if etag:
                    headers["If-None-Match"] = etag
                start = time.perf_counter()
                client.request("GET", path, headers=headers)
                answer = client.getresponse()
                body = answer.read()
                took = time.perf_counter() - start
                client.close()
                return took, len(body), answer.status, answer.getheader("etag") or ""

            size_mb = long_events.stat().st_size / 1e6
            print(f"\na long run's page: events.jsonl {size_mb:.1f} MB, /api/runs/{LONG_RUN}")
            path = f"/api/runs/{LONG_RUN}"

            def show(label: str, took: float, size: int, code: int) -> None:
                print(f"  {label:<36} {ms(took)}  {size / 1e3:8.1f} kB  ({code})")

            took, size, code, etag = fetch(path)
            show("first answer (cold parse)", took, size, code)
            took, size, code, _ = fetch(path)
            show("asked again", took, size, code)
            took, size, code, _ = fetch(path, etag)
            show("asked again with its ETag", took, size, code)
            with long_events.open("ab") as grown:
                grown.write(events_lines(1.0, start=10_000_000))
            took, size, code, _ = fetch(path, etag)
            show("after the run appended 1 MB", took, size, code)

            # idle: one page open (an SSE stream), nothing changes
            server = psutil.Process(proc.pid)
            stream = http.client.HTTPConnection(host, int(port), timeout=args.idle + 30)
            stream.request("GET", f"/events?token={token}")
            answer = stream.getresponse()
            answer.fp.readline()  # the first status event has started
            time.sleep(3)
            for label, window in (("one page open (SSE)", args.idle),):
                before = server.cpu_times()
                start = time.perf_counter()
                time.sleep(window)
                after = server.cpu_times()
                cpu = (after.user - before.user) + (after.system - before.system)
                share = cpu / (time.perf_counter() - start) * 100
                print(
                    f"\ndashboard idle, {label}: {cpu * 1000:.0f} ms CPU in {window:.0f} s = "
                    f"{share:.2f} % of a core (target <= 1 %)"
                )
            stream.close()
            before = server.cpu_times()
            time.sleep(args.idle / 2)
            after = server.cpu_times()
            cpu = (after.user - before.user) + (after.system - before.system)
            print(
                f"dashboard idle, no page open: {cpu * 1000:.0f} ms CPU in {args.idle / 2:.0f} s "
                f"= {cpu / (args.idle / 2) * 100:.2f} % of a core"
            )
        finally:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


PHASES = """
import time
t = time.perf_counter()
def lap(label):
    global t
    now = time.perf_counter()
    print(f"  {label:<44} {(now - t) * 1000:7.1f} ms")
    t = now
import click
from tether.config import load_config
config = load_config()
lap("click + configuration")
from tether.status import collect as c
from tether.store.state_db import connect_reader
conn = connect_reader(config.home)
lap("store opened read-only")
now = time.time()
c.running_panel(conn, now); lap("runs in progress")
c.loops_panel(conn, now); lap("loop records")
c.board_panel(config, now); lap("board (+ the board package, from the cache file)")
c.watch_panel(config, conn, now, survey=False); lap("watch registry and wakes")
c.watch_panel(config, conn, now, survey=True); lap("watch survey (skipped when nothing can run)")
from tether.watch.survey import Surveyor
from tether.config.schema import WatchSettings
s = Surveyor(config.section("watch", WatchSettings), config.home)
s.look(conn, now, with_not_counted=False); s.close()
lap("the survey forced (+ its imports, /proc, tmux)")
c.gate_panel(config.home, conn); c.ingest_panel(config); c.room_panel(config.home)
lap("gate, ingest, room")
status = c.look(config); lap("the whole status object again (warm)")
from tether.status.textui import render
from tether.status.view import screen
render(screen(status, 120), False); lap("text screen (text output only)")
"""


def _timed(work: Callable[[], object]) -> float:
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


if __name__ == "__main__":
    main()
