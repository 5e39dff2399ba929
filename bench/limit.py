"""How fast a limit stop lands.

A scripted agent runs steps as fast as it can; for each of N runs (default 50
per format) print the delay from the event that decides the iteration limit to
the agent's process group being gone. Median and p95; target: p95 <= 50 ms.

Run: .venv/bin/python bench/limit.py [--runs 50]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from tether.config import load_config
from tether.runs.supervisor import RunRequest, supervise


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


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--limit", type=int, default=3)
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


if __name__ == "__main__":
    main()
