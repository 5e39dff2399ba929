"""Start-up of the ``tether`` command: the console script, run to its exit.

Every ``tether`` a person, an agent's hook or the loop starts pays the
interpreter, click and what its command imports. Measured in the same run,
interleaved call by call, against the venv interpreter doing nothing
(``python -c pass``), in a throwaway project with a board of one ticket:

  --help                  the command list (no command module imported)
  board list              the board read through its cache, the config loaded
  runs list               the state database and the table renderer
  status                  the one-screen view
  loop stop-hook          what Claude Code starts at every end of a turn
  loop tick --dry-run     the loop's decision over the board (a tick's start-up)
  board add               one ticket written, to a spare board
  ingest next             an agent's claim on the ingest queue (nothing waits)
  events count --json     a stream counted (the stop payload: one unknown line)
  run                     one supervised run of the scripted agent (one step),
                          sandboxed: CPU of the whole process tree

With ``--against SRC`` (the ``src`` folder of another checkout, e.g. from
``git archive main src | tar -x -C /tmp/before``) every command also runs with
that tether first on ``PYTHONPATH``, interleaved, and each line ends with the
ratio of this tree's median CPU to that one's: a change's gain measured in
one run, under one load. Inside a run's sandbox the agent and the gate's hook
use this venv's tether either way.

It prints, per command, the median and 90th percentile of wall time, the
minimum and median CPU time of the process (user + system, what the machine's
load inflates least), and the ratio of the median wall time to the baseline's.
It never asserts a time.

tether is byte-compiled first, as an installed wheel has it: with
``PYTHONDONTWRITEBYTECODE=1`` an editable install would otherwise compile its
modules again in every process, a cost no installed tether pays.

    .venv/bin/python bench/cli_start.py [--runs 20]
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SPARE_BOARD = "{spare}"  # a second board, so that the tickets added do not grow the measured one
STOP_PAYLOAD = {
    "session_id": "bench",
    "transcript_path": "/dev/null",
    "hook_event_name": "Stop",
    "stop_hook_active": False,
}
COMMANDS: dict[str, list[str]] = {
    "--help": ["--help"],
    "board list": ["board", "list"],
    "runs list": ["runs", "list"],
    "status": ["status"],
    "loop stop-hook": ["loop", "stop-hook", "--harness", "claude-code"],
    "loop tick --dry-run": ["loop", "tick", "--dry-run"],
    "board add": ["board", "add", "--board", SPARE_BOARD, "--state", "DONE", "bench"],
    "ingest next": ["ingest", "next"],
    "events count --json": ["events", "count", "--harness", "claude-code", "--json", "-"],
    "run": ["run", "--prompt", "bench"],
}
PROFILE = '[profiles.bench]\nharness = "scripted"\nargs = ["--steps", "1"]\ndefault = true\n'


def tether_executable() -> str:
    tether = Path(sys.executable).parent / "tether"
    if not tether.exists():
        sys.exit(f"bench: {tether} is missing; install tether into this venv (pip install -e .)")
    return str(tether)


def compile_tether(against: Path | None) -> None:
    import tether

    for package in (Path(tether.__file__).parent, against and against / "tether"):
        if package and not compileall.compile_dir(package, quiet=1):
            sys.exit(f"bench: {package} could not be byte-compiled")


def make_project(root: Path, env: dict[str, str], tether: str) -> None:
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "tether.toml").write_text(PROFILE, encoding="utf-8")
    for argv in (["board", "init"], ["board", "add", "a ticket"]):
        subprocess.run([tether, *argv], cwd=root, env=env, capture_output=True, check=True)


def timed(argv: list[str], cwd: Path, env: dict[str, str], stdin: str) -> tuple[float, float]:
    """Wall and CPU seconds of one process run to its exit."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, input=stdin, capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"bench: {' '.join(argv)} exited {done.returncode}: {done.stderr.strip()}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def p90(values: list[float]) -> float:
    return sorted(values)[max(0, int(len(values) * 0.9) - 1)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--against", type=Path, help="another tether's src folder to compare")
    args = parser.parse_args()
    tether = tether_executable()
    compile_tether(args.against)
    with tempfile.TemporaryDirectory(prefix="tether-bench-cli-") as folder:
        root = Path(folder) / "project"
        home = str(Path(folder) / "home")
        env = {**os.environ, "TETHER_HOME": home, "NO_COLOR": "1", "TETHER_SESSION_ID": "bench"}
        make_project(root, env, tether)
        spare = str(Path(folder) / "spare-board")
        stdin = json.dumps({**STOP_PAYLOAD, "cwd": str(root)})
        cases = {"python -c pass": [sys.executable, "-c", "pass"]}
        cases |= {
            name: [tether, *(spare if a == SPARE_BOARD else a for a in argv)]
            for name, argv in COMMANDS.items()
        }
        envs = {name: env for name in cases}
        if args.against is not None:
            other = {**env, "PYTHONPATH": str(args.against.resolve())}
            for name in COMMANDS:
                cases[f"{name} @against"] = cases[name]
                envs[f"{name} @against"] = other
        walls: dict[str, list[float]] = {name: [] for name in cases}
        cpus: dict[str, list[float]] = {name: [] for name in cases}
        for name, argv in cases.items():  # one unmeasured call each: caches warm
            timed(argv, root, envs[name], stdin)
        for _ in range(args.runs):
            for name, argv in cases.items():
                wall, cpu = timed(argv, root, envs[name], stdin)
                walls[name].append(wall)
                cpus[name].append(cpu)
    report(args.runs, walls, cpus)


def report(runs: int, walls: dict[str, list[float]], cpus: dict[str, list[float]]) -> None:
    base = statistics.median(walls["python -c pass"])
    print(f"tether start-up, {runs} runs each, interleaved; load {os.getloadavg()[0]:.2f}")
    for name in walls:
        wall, cpu = statistics.median(walls[name]), statistics.median(cpus[name])
        line = (
            f"{name:28s} wall median {wall * 1000:6.1f} ms  p90 {p90(walls[name]) * 1000:6.1f} ms"
            f"  cpu min {min(cpus[name]) * 1000:6.1f} median {cpu * 1000:6.1f} ms"
            f"  ratio {wall / base:5.2f}x"
        )
        against = cpus.get(f"{name} @against")
        if against:
            line += f"  cpu vs against {cpu / statistics.median(against):5.2f}x"
        print(line)


if __name__ == "__main__":
    main()
