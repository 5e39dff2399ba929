"""How fast a limit stop lands, and what live supervision costs over bare parsing.

1. Stop delay: a scripted agent runs steps as fast as it can; for each of N runs
   (default 50 per format) print the delay from the event that decides the
   iteration limit to the agent's process group being gone. Median and p95.
2. Supervisor CPU: the supervisor's own CPU time (``time.process_time`` of the
   supervising process: reading the pipe, framing, writing events.jsonl,
   parsing, counting, limit checks, plus its fixed start-up) per 10,000 events
   of a replayed stream, next to the adapter's bare ``parse_line`` time over the
   same recorded lines, measured in the same run. Ratio printed.

Targets: p95 stop delay <= 50 ms; supervisor CPU <= 1.5x bare parsing.
Run: .venv/bin/python bench/limit.py [--runs 50] [--lines 200000]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tether.config import load_config
from tether.events.lines import iter_lines
from tether.harnesses import get_harness
from tether.runs.supervisor import RunRequest, supervise

ROOT = Path(__file__).resolve().parent.parent
TRANSCRIPTS = ROOT / "tests" / "transcripts"


def _project(tmp: Path, args: list[str]) -> Path:
    work = tmp / f"work-{len(list(tmp.iterdir()))}"
    work.mkdir()
    quoted = ", ".join(f'"{a}"' for a in args)
    (work / "tether.toml").write_text(
        "max_iterations_cap = 10000000\niteration_limit = 10000000\nkill_grace_seconds = 2\n"
        f'[profiles.bench]\nharness = "scripted"\nargs = [{quoted}]\ndefault = true\n'
    )
    return work


def stop_delays(tmp: Path, fmt: str, runs: int, limit: int) -> list[float]:
    work = _project(tmp, ["--format", fmt, "--steps", "100000"])
    os.environ["TETHER_HOME"] = str(tmp / f"home-{fmt}")
    config = load_config(cwd=work)
    delays: list[float] = []
    for _ in range(runs):
        outcome = supervise(RunRequest(prompt="bench", iterations=limit, cwd=work), config=config)
        if outcome.stop_latency is not None:
            delays.append(outcome.stop_latency)
    return delays


def supervisor_cpu(tmp: Path, fmt: str, lines: int) -> tuple[float, float, int]:
    source = TRANSCRIPTS / fmt / "forever.jsonl"
    recorded = source.read_bytes().splitlines()
    big = tmp / f"{fmt}-replay.jsonl"
    with big.open("wb") as f:
        written = 0
        while written < lines:
            for line in recorded:
                f.write(line + b"\n")
            written += len(recorded)
    work = _project(tmp, ["--format", fmt, "--replay", str(big)])
    os.environ["TETHER_HOME"] = str(tmp / f"home-cpu-{fmt}")
    config = load_config(cwd=work)
    c0 = time.process_time()
    outcome = supervise(RunRequest(prompt="bench", cwd=work), config=config)
    supervisor = time.process_time() - c0
    events = outcome.ledger.events
    adapter = get_harness(fmt)
    with big.open("rb") as f:
        data = list(iter_lines(f))
    best = float("inf")
    for _ in range(3):
        c0 = time.process_time()
        for line in data:
            adapter.parse_line(line)
        best = min(best, time.process_time() - c0)
    return supervisor, best, events


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--limit", type=int, default=3)
    ap.add_argument("--lines", type=int, default=200_000)
    ap.add_argument("--formats", default="claude-code,pi")
    args = ap.parse_args()
    subprocess.run([sys.executable, "-c", "pass"], check=True)  # warm the interpreter cache
    with tempfile.TemporaryDirectory(prefix="tether-bench-limit-") as name:
        tmp = Path(name)
        print(f"# stop delay: {args.runs} runs per format, --iterations {args.limit}")
        for fmt in args.formats.split(","):
            delays = stop_delays(tmp, fmt, args.runs, args.limit)
            ms = [d * 1000 for d in delays]
            print(
                f"{fmt:12s} runs={len(ms):3d} median={statistics.median(ms):7.2f} ms "
                f"p95={_pct(ms, 0.95):7.2f} ms max={max(ms):7.2f} ms (target p95 <= 50 ms)"
            )
        print(f"# supervisor CPU vs bare adapter parse, >= {args.lines} replayed lines")
        for fmt in args.formats.split(","):
            sup, bare, events = supervisor_cpu(tmp, fmt, args.lines)
            per = 10_000 / max(events, 1)
            print(
                f"{fmt:12s} events={events} supervisor={sup * per * 1000:7.2f} ms/10k events "
                f"bare-parse={bare * per * 1000:7.2f} ms/10k events "
                f"ratio={sup / bare:5.2f}x (target <= 1.5x)"
            )


if __name__ == "__main__":
    main()
