"""Adapter parse speed against a bare ``json.loads`` loop, per harness, same run.

For every harness that has an adapter and a recorded ``forever`` transcript in
``tests/transcripts/<harness>/``, builds a stream of at least 200,000 lines by
repeating the transcript's lines, then times over those same byte lines:

- baseline: ``json.loads(line)`` for every line;
- the adapter: ``harness.parse_line(line)`` for every line;
- for reference: the adapter plus the accounting fold, and ``msgspec.json.decode``.

Best of a few repeats each. Prints lines/s, events/s and the ratio of adapter to
baseline throughput (target >= 1.0x). Then prints the peak RSS of a child
``tether events count`` over a file of 1x and 5x that stream (it must stay flat).
Prints figures; asserts nothing about time.

    .venv/bin/python bench/parse.py [--lines 200000] [--repeats 5] [--harness NAME ...]
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import msgspec

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository, for bench.*

from bench.count_large import TRANSCRIPTS, count_file, mib, transcript_lines, write_stream

from tether.events.accounting import Ledger, apply
from tether.harness_registry import BUILTIN
from tether.harnesses import get_harness
from tether.harnesses.base import Harness


def best_of(repeats: int, run: Callable[[], int]) -> tuple[float, int]:
    """The shortest wall time over ``repeats`` runs, and what the run counted."""
    best, counted = float("inf"), 0
    for _ in range(repeats):
        gc.collect()
        started = time.perf_counter()
        counted = run()
        best = min(best, time.perf_counter() - started)
    return best, counted


def bare_json(lines: list[bytes]) -> int:
    loads = json.loads
    for line in lines:
        loads(line)
    return len(lines)


def bare_msgspec(lines: list[bytes]) -> int:
    decode = msgspec.json.decode
    for line in lines:
        decode(line)
    return len(lines)


def adapter(harness: Harness, lines: list[bytes]) -> int:
    parse = harness.parse_line
    events = 0
    for line in lines:
        events += len(parse(line))
    return events


def adapter_and_fold(harness: Harness, lines: list[bytes]) -> int:
    parse = harness.parse_line
    ledger = Ledger()
    for line in lines:
        for event in parse(line):
            apply(ledger, event)
    return ledger.events


def available(names: list[str]) -> list[tuple[str, Harness]]:
    found = []
    for name in names:
        if not (TRANSCRIPTS / name / "forever.jsonl").exists():
            print(f"{name}: skipped (no recorded forever.jsonl)")
            continue
        try:
            found.append((name, get_harness(name)))
        except ImportError as exc:
            print(f"{name}: skipped (no adapter: {exc})")
    return found


def bench_speed(name: str, harness: Harness, n_lines: int, repeats: int) -> list[bytes]:
    block = transcript_lines(name)
    lines = block * -(-n_lines // len(block))
    size = sum(map(len, lines)) + len(lines)
    print(f"\n{name}: {len(lines):,} lines ({len(block)} recorded lines repeated), {mib(size)}")
    base_t, base_n = best_of(repeats, lambda: bare_json(lines))
    ada_t, events = best_of(repeats, lambda: adapter(harness, lines))
    fold_t, _ = best_of(repeats, lambda: adapter_and_fold(harness, lines))
    ms_t, _ = best_of(repeats, lambda: bare_msgspec(lines))
    rows = [
        ("bare json.loads (baseline)", base_t, base_n),
        ("adapter parse_line", ada_t, events),
        ("adapter + accounting fold", fold_t, events),
        ("bare msgspec.json.decode", ms_t, base_n),
    ]
    print(f"  {'':28} {'lines/s':>12} {'events/s':>12} {'vs baseline':>12}")
    for label, seconds, produced in rows:
        print(
            f"  {label:28} {len(lines) / seconds:12,.0f} {produced / seconds:12,.0f}"
            f" {base_t / seconds:11.2f}x"
        )
    verdict = "meets" if base_t / ada_t >= 1.0 else "BELOW"
    print(f"  ratio adapter/bare json.loads: {base_t / ada_t:.2f}x ({verdict} the 1.0x target)")
    return lines


def bench_memory(name: str, lines: list[bytes]) -> None:
    size = sum(map(len, lines)) + len(lines)
    with tempfile.TemporaryDirectory(prefix="tether-bench-") as tmp:
        peaks = []
        for times in (1, 5):
            path = Path(tmp) / f"{times}x.jsonl"
            write_stream(path, lines, times * size)
            run, ledger = count_file(path, name)
            peaks.append(run.peak_rss)
            print(
                f"  tether events count, {times}x file ({mib(path.stat().st_size)}): "
                f"peak RSS {mib(run.peak_rss)}, {run.seconds:.2f} s, {ledger['events']:,} events"
            )
            path.unlink()
        print(f"  peak RSS 5x/1x: {peaks[1] / peaks[0]:.2f}x (flat is 1.0x)")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=200_000, help="at least this many lines")
    parser.add_argument("--repeats", type=int, default=5, help="best of this many runs")
    parser.add_argument("--harness", action="append", help="only these (default: all)")
    parser.add_argument("--no-memory", action="store_true", help="skip the RSS runs")
    args = parser.parse_args(argv)

    names = args.harness or [name for name in BUILTIN if name != "scripted"]
    print(f"python {sys.version.split()[0]}, msgspec {msgspec.__version__}")
    for name, harness in available(names):
        lines = bench_speed(name, harness, args.lines, args.repeats)
        if not args.no_memory:
            bench_memory(name, lines)


if __name__ == "__main__":
    main()
