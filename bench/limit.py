"""How fast a limit stop lands.

A scripted agent runs steps as fast as it can; for each of N runs (default 50
per format) print the delay from the event that decides the iteration limit to
the agent's process group being gone, as the supervisor measures it (its
``stop_latency``). Median and p95; target: p95 <= 50 ms.

The baseline, measured in the same run: the same stop (``AgentProcess.stop``:
SIGTERM to the group, wait until it is gone) of a bare agent that only sleeps,
i.e. what signalling and reaping alone cost on this machine right now.

A format whose runs the agent ended by itself at the limit (the run's own hook
answered "stop" first: the Codex format, whose steps tether reads from the
rollout file) has no supervisor stop to measure; the line says so.

Run: .venv/bin/python bench/limit.py [--runs 50] [--formats claude-code,pi]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from tether.config import load_config
from tether.runs.process import spawn_agent
from tether.runs.supervisor import RunRequest, supervise

FORMATS = "claude-code,copilot,pi,codex"


def _project(tmp: Path, args: list[str]) -> Path:
    work = tmp / f"work-{len(list(tmp.iterdir()))}"
    work.mkdir()
    quoted = ", ".join(f'"{a}"' for a in args)
    (work / "tether.toml").write_text(
        "max_iterations_cap = 10000000\niteration_limit = 10000000\nkill_grace_seconds = 2\n"
        f'[profiles.bench]\nharness = "scripted"\nargs = [{quoted}]\ndefault = true\n'
    )
    return work


def stop_delays(tmp: Path, fmt: str, runs: int, limit: int) -> tuple[list[float], Counter[str]]:
    """The supervisor's stop delays, and how each run without one ended."""
    work = _project(tmp, ["--format", fmt, "--steps", "100000"])
    os.environ["TETHER_HOME"] = str(tmp / f"home-{fmt}")
    config = load_config(cwd=work)
    delays: list[float] = []
    others: Counter[str] = Counter()
    for _ in range(runs):
        outcome = supervise(RunRequest(prompt="bench", iterations=limit, cwd=work), config=config)
        if outcome.stop_latency is not None:
            delays.append(outcome.stop_latency)
        else:
            others[outcome.stop.value] += 1
    return delays, others


def bare_stop_delays(tmp: Path, runs: int) -> list[float]:
    """The baseline: stopping an agent that only sleeps, through the same ``stop``."""
    delays: list[float] = []
    for _ in range(runs):
        agent = spawn_agent(
            [sys.executable, "-c", "import time; print(flush=True); time.sleep(60)"],
            env=dict(os.environ),
            cwd=tmp,
            harness="bare",
            kill_grace=2.0,
        )
        agent.stdout.readline()  # it runs: the stop hits a started interpreter
        started = time.monotonic()
        agent.stop(2.0)
        delays.append(time.monotonic() - started)
        agent.close()
    return delays


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _line(name: str, delays: list[float], target: str) -> str:
    ms = [d * 1000 for d in delays]
    return (
        f"{name:12s} runs={len(ms):3d} median={statistics.median(ms):7.2f} ms "
        f"p95={_pct(ms, 0.95):7.2f} ms max={max(ms):7.2f} ms{target}"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--limit", type=int, default=3)
    ap.add_argument("--formats", default=FORMATS)
    args = ap.parse_args()
    subprocess.run([sys.executable, "-c", "pass"], check=True)  # warm the interpreter cache
    with tempfile.TemporaryDirectory(prefix="tether-bench-limit-") as name:
        tmp = Path(name)
        print(f"# stop delay: {args.runs} runs per format, --iterations {args.limit}")
        print(_line("baseline", bare_stop_delays(tmp, args.runs), " (a bare sleeping agent)"))
        for fmt in args.formats.split(","):
            delays, others = stop_delays(tmp, fmt, args.runs, args.limit)
            if delays:
                print(_line(fmt, delays, " (target p95 <= 50 ms)"))
            if others:
                ended = ", ".join(f"{n} runs at {status}" for status, n in others.items())
                print(f"{fmt:12s} the agent ended itself, no supervisor stop to measure: {ended}")


if __name__ == "__main__":
    main()
