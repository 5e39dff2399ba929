"""``tether events count`` on a large stream: wall time, throughput, peak RSS.

Generates a stream file (default 1 GiB) by repeating a recorded transcript, runs
the real console script on it as a child process, prints its wall time, lines/s
and the child's own peak RSS, and removes the file. For scale it also runs, in
the same run, a bare ``json.loads`` loop over the same file in a child process
and the counter on a 1 MiB file (peak RSS baseline). It prints ratios; it never
asserts a time.

    .venv/bin/python bench/count_large.py [--size 1G] [--harness claude-code]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TRANSCRIPTS = ROOT / "tests" / "transcripts"
MIB = 1024 * 1024
UNITS = {"": 1, "K": 1024, "M": MIB, "G": 1024 * MIB}

BARE_LOOP = """
import json, sys
n = 0
with open(sys.argv[1], "rb") as f:
    for line in f:
        if line.strip():
            json.loads(line)
            n += 1
print(n)
"""


@dataclass(frozen=True)
class ChildRun:
    seconds: float
    peak_rss: int  # bytes, the child's own maximum resident set
    returncode: int
    stdout: bytes


def tether_executable() -> str:
    beside = Path(sys.executable).parent / "tether"
    found = str(beside) if beside.exists() else shutil.which("tether")
    if found is None:
        sys.exit("bench: the tether console script is not installed (pip install -e .)")
    return found


# Run argv as a child of this small launcher and report the child's wall time,
# exit status and peak RSS. Not measured from the bench process directly: on Linux
# a child's ru_maxrss also counts the RSS of the process it was forked from (the
# high-water mark is carried over exec), which here holds the whole test stream.
RSS_LAUNCHER = """
import os, subprocess, sys, time
started = time.perf_counter()
child = subprocess.Popen(sys.argv[2:])
_, status, usage = os.wait4(child.pid, 0)
seconds = time.perf_counter() - started
with open(sys.argv[1], "w") as report:
    report.write(f"{seconds} {usage.ru_maxrss} {os.waitstatus_to_exitcode(status)}")
"""


def run_child(argv: list[str]) -> ChildRun:
    """Run ``argv`` to its end; its wall time and its own peak RSS."""
    with tempfile.TemporaryDirectory(prefix="tether-bench-rss-") as tmp:
        report, out = Path(tmp) / "report", Path(tmp) / "stdout"
        with out.open("wb") as stdout:
            subprocess.run(
                [sys.executable, "-c", RSS_LAUNCHER, str(report), *argv],
                stdin=subprocess.DEVNULL,
                stdout=stdout,
                check=True,
            )
        seconds, maxrss_kib, returncode = report.read_text().split()
        return ChildRun(float(seconds), int(maxrss_kib) * 1024, int(returncode), out.read_bytes())


def count_file(path: Path, harness: str) -> tuple[ChildRun, dict[str, Any]]:
    """``tether events count --json`` on ``path``; the run and the parsed ledger."""
    run = run_child(
        [tether_executable(), "events", "count", "--harness", harness, "--json", str(path)]
    )
    if run.returncode != 0:
        sys.exit(f"bench: tether events count exited {run.returncode}")
    ledger: dict[str, Any] = json.loads(run.stdout)
    return run, ledger


def transcript_lines(harness: str) -> list[bytes]:
    """The non-empty lines of the harness's recorded ``forever`` transcript."""
    path = TRANSCRIPTS / harness / "forever.jsonl"
    return [line for line in path.read_bytes().splitlines() if line.strip()]


def write_stream(path: Path, lines: list[bytes], size: int) -> int:
    """Write whole copies of ``lines`` until ``path`` holds about ``size`` bytes.

    Returns the number of lines written.
    """
    block = b"\n".join(lines) + b"\n"
    copies = max(1, round(size / len(block)))
    chunk_copies = max(1, 4 * MIB // len(block))
    chunk = block * chunk_copies
    with path.open("wb") as f:
        left = copies
        while left >= chunk_copies:
            f.write(chunk)
            left -= chunk_copies
        f.write(block * left)
    return copies * len(lines)


def parse_size(text: str) -> int:
    """``1G``, ``512M``, ``1.5GiB``, ``1000000`` -> bytes."""
    match = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([KMG]?)(?:I?B)?", text.strip().upper())
    if match is None:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (e.g. 1G, 512M)")
    return int(float(match[1]) * UNITS[match[2]])


def mib(n: float) -> str:
    return f"{n / MIB:,.1f} MiB"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=parse_size, default=1024 * MIB, help="default 1G")
    parser.add_argument("--harness", default="claude-code")
    parser.add_argument("--dir", type=Path, default=None, help="where to write the stream")
    parser.add_argument("--no-baseline", action="store_true", help="skip the json.loads run")
    args = parser.parse_args(argv)

    lines = transcript_lines(args.harness)
    with tempfile.TemporaryDirectory(dir=args.dir, prefix="tether-bench-") as tmp:
        small_path, path = Path(tmp) / "small.jsonl", Path(tmp) / "large.jsonl"
        write_stream(small_path, lines, MIB)
        started = time.perf_counter()
        n_lines = write_stream(path, lines, args.size)
        size = path.stat().st_size
        print(f"stream: {mib(size)}, {n_lines:,} lines of {args.harness} (forever.jsonl repeated)")
        print(f"  written in {time.perf_counter() - started:.1f} s")

        small, _ = count_file(small_path, args.harness)
        run, ledger = count_file(path, args.harness)
        print(f"tether events count --json: {run.seconds:.1f} s wall")
        print(f"  {n_lines / run.seconds:,.0f} lines/s, {size / MIB / run.seconds:,.0f} MiB/s")
        print(
            f"  {ledger['events']:,} events, {ledger['tool_calls']:,} tool calls, "
            f"{ledger['malformed_lines']} malformed"
        )
        print(
            f"  peak RSS {mib(run.peak_rss)} (on a 1 MiB file: {mib(small.peak_rss)}, "
            f"ratio {run.peak_rss / small.peak_rss:.2f}x)"
        )

        if not args.no_baseline:
            bare = run_child([sys.executable, "-c", BARE_LOOP, str(path)])
            print(
                f"baseline, bare json.loads loop over the same file: {bare.seconds:.1f} s wall, "
                f"{n_lines / bare.seconds:,.0f} lines/s, peak RSS {mib(bare.peak_rss)}"
            )
            print(f"  tether count speed / bare loop: {bare.seconds / run.seconds:.2f}x")
        path.unlink()


if __name__ == "__main__":
    main()
