"""The guarantee matrix, measured against the real agent CLIs.

For each real CLI found (``.ci/agents/node_modules/.bin`` or
``$TETHER_AGENT_BIN_DIR``) and each limit, run ``tether run`` N times against
the scripted model server's ``touch-forever`` script (every tool call leaves a
file ``tick-K.done`` behind, and the model never stops). Per run it records the
exit code, the stop reason, how many side-effect files exist (calls that were
*executed*), how many model requests the server answered, and whether the
report names a refused call. A line per CLI and limit prints how many of the N
runs held the limit exactly.

Run: .venv/bin/python bench/guarantees.py [--runs 10] [--harness codex ...]
     [--limit tool-calls ...]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tests.support.limited_run import limited_run

from tether.testing.model_server import ModelServer

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(os.environ.get("TETHER_AGENT_BIN_DIR") or ROOT / ".ci/agents/node_modules/.bin")
EXECUTABLES = {"claude-code": "claude", "codex": "codex", "copilot": "copilot", "pi": "pi"}


@dataclass(frozen=True)
class Limit:
    name: str
    flags: tuple[str, ...]
    exit_code: int
    # how many side-effect files the limit allows (None: not checked by count)
    files: int | None
    gate_budget: int | None = None


LIMITS = {
    "tool-calls": Limit("tool-calls 2", ("--tool-calls", "2"), 21, 2),
    "iterations": Limit("iterations 3", ("--iterations", "3"), 20, 3),
    "gate-budget": Limit("gate budget 3", (), 21, 3, gate_budget=3),
    "timeout": Limit("timeout 4s", ("--timeout", "4"), 22, None),
    "tokens": Limit("tokens 3000", ("--tokens", "3000"), 25, None),  # exit 3 on Copilot
}


@dataclass
class Outcome:
    exit_code: int
    status: str
    files: int
    model_calls: int
    refused: str | None
    in_flight: object

    def holds(self, limit: Limit) -> bool:
        if self.exit_code != limit.exit_code:
            return False
        return limit.files is None or self.files == limit.files


def run_once(harness: str, limit: Limit, tmp: Path) -> Outcome:
    exe = BIN / EXECUTABLES[harness]
    with ModelServer("touch-forever", think=0.02) as server:
        gate = f"gate_budget = {limit.gate_budget}\n" if limit.gate_budget else ""
        done, work = limited_run(
            harness,
            exe,
            server.port,
            tmp,
            tmp / "tether-home",
            limit.flags,
            config=gate,
            run_timeout=60,
            wait=120,
        )
        model_calls = server.model_calls
    files = len(list(work.glob("tick-*.done")))
    status, refused, in_flight = "?", None, None
    try:
        record = json.loads(done.stdout)
        status = record.get("status", "?")
        report = json.loads(Path(record["run_dir"], "report.json").read_text())
        refused = (report.get("refused_call") or {}).get("tool")
        in_flight = report.get("in_flight")
    except (ValueError, KeyError, OSError):
        status = f"? {done.stderr.strip()[-200:]}"
    return Outcome(done.returncode, status, files, model_calls, refused, in_flight)


def _shower(outcomes: list[Outcome]) -> Callable[[Callable[[Outcome], object]], str]:
    def show(field: Callable[[Outcome], object]) -> str:
        return ",".join(str(field(o)) for o in outcomes)

    return show


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--harness", action="append", choices=sorted(EXECUTABLES))
    p.add_argument("--limit", action="append", choices=sorted(LIMITS))
    args = p.parse_args()
    harnesses = args.harness or sorted(EXECUTABLES)
    limits = args.limit or ["tool-calls"]
    print(f"{'harness':12} {'limit':16} held  exit codes / side-effect files / model calls")
    failed = False
    for harness in harnesses:
        if not (BIN / EXECUTABLES[harness]).exists():
            print(f"{harness:12} not installed in {BIN}")
            continue
        for key in limits:
            limit = LIMITS[key]
            outcomes: list[Outcome] = []
            for _ in range(args.runs):
                with tempfile.TemporaryDirectory(prefix="tether-guarantee-") as tmp:
                    outcomes.append(run_once(harness, limit, Path(tmp)))
            held = sum(o.holds(limit) for o in outcomes)
            failed = failed or held < len(outcomes)
            show = _shower(outcomes)
            print(
                f"{harness:12} {limit.name:16} {held}/{len(outcomes)}  "
                f"exit {show(lambda o: o.exit_code)} / files {show(lambda o: o.files)} / "
                f"model {show(lambda o: o.model_calls)}"
            )
            refused = {o.refused for o in outcomes}
            statuses = {o.status for o in outcomes}
            print(f"{'':29} status {sorted(statuses)} refused call: {sorted(map(str, refused))}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
