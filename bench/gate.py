"""Whole-process latency of ``tether-gate hook``: payload on stdin to decision out.

Measured in the same run, interleaved call by call, against two baselines:

  (a) the venv interpreter doing nothing: ``python -I -S -c pass``
  (b) a minimal hand-written stdlib hook: reads the same JSON, increments a WAL
      SQLite counter in one BEGIN IMMEDIATE, prints a decision

The gate runs as the installed console script, by its absolute path, exactly as
a harness's hook configuration calls it, with the recorded Claude Code
PreToolUse payload (a fresh tool_use_id per call, so every call counts). It
prints medians, 90th percentiles and the ratios gate/(b) and gate/(a) (targets:
at most 1.15x and 3x). A fourth line times the same payload without its
``session_id``: the gate then walks ``/proc`` and asks its memory of earlier
calls (the process-tree fallback), printed as its own ratio against (b). A
fifth times it with ``TETHER_POLICY=off``: the payload is a Bash call, so the
gate otherwise checks it against the command belt's built-in rules, and the
ratio of the two is the belt's own cost. It never asserts a time.

The gate's modules are byte-compiled first, as an installed wheel has them:
with ``PYTHONDONTWRITEBYTECODE=1`` a module edited since its last compile would
otherwise be compiled again on every call, a few milliseconds that no
installed gate pays.

    .venv/bin/python bench/gate.py [--runs 200]
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAYLOAD = ROOT / "tests" / "gate" / "golden" / "claude-code" / "PreToolUse.payload.json"

MINIMAL_HOOK = """\
import json, sqlite3, sys
payload = json.load(sys.stdin)
conn = sqlite3.connect(sys.argv[1], timeout=10, isolation_level=None)
conn.execute("PRAGMA synchronous = NORMAL")
conn.execute("BEGIN IMMEDIATE")
conn.execute(
    "INSERT INTO calls (session, n) VALUES (?, 1) "
    "ON CONFLICT (session) DO UPDATE SET n = n + 1",
    (payload["session_id"],),
)
(n,) = conn.execute("SELECT n FROM calls WHERE session = ?", (payload["session_id"],)).fetchone()
conn.execute("COMMIT")
if n > 1000000:
    print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                      "permissionDecision": "deny", "permissionDecisionReason": "spent"}}))
"""


def gate_executable() -> str:
    gate = Path(sys.executable).parent / "tether-gate"
    if not gate.exists():
        sys.exit(f"bench: {gate} is missing; install tether into this venv (pip install -e .)")
    return str(gate)


def compile_gate() -> None:
    """Fresh bytecode for the modules ``tether-gate`` imports (tether and tether.gate)."""
    import tether.gate

    package = Path(tether.gate.__file__).parent
    ok = compileall.compile_dir(package, quiet=1) and compileall.compile_file(
        package.parent / "__init__.py", quiet=1
    )
    if not ok:
        sys.exit(f"bench: cannot byte-compile {package}")


def timed(argv: list[str], stdin: bytes, env: dict[str, str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(argv, input=stdin, capture_output=True, env=env, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"bench: {argv[0]} failed ({done.returncode}): {done.stderr.decode()[-500:]}")
    return elapsed


def describe(name: str, samples: list[float]) -> str:
    ordered = sorted(samples)
    p90 = ordered[int(0.9 * (len(ordered) - 1))]
    median = statistics.median(samples) * 1000
    return f"  {name:<44} median {median:7.2f} ms   p90 {p90 * 1000:7.2f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200, help="calls per contender (default 200)")
    args = parser.parse_args()
    gate = gate_executable()
    compile_gate()
    python = sys.executable
    base_payload = json.loads(PAYLOAD.read_text())

    with tempfile.TemporaryDirectory(prefix="tether-bench-gate-") as tmp:
        home = Path(tmp) / "home"
        minimal_db = Path(tmp) / "minimal.db"
        script = Path(tmp) / "minimal_hook.py"
        script.write_text(MINIMAL_HOOK)
        conn = sqlite3.connect(minimal_db)
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("CREATE TABLE calls (session TEXT PRIMARY KEY, n INTEGER NOT NULL)")
        conn.close()
        env = {
            k: v for k, v in os.environ.items() if not k.startswith(("TETHER_", "CLAUDE", "CODEX"))
        }
        env |= {"TETHER_HOME": str(home), "TETHER_GATE_BUDGET": "1000000"}
        # the payload is a Bash call: without a policy file the belt's built-in rules run
        belt_off = {**env, "TETHER_POLICY": "off"}
        counter = iter(range(10**9))

        def payload() -> bytes:
            return json.dumps(
                {**base_payload, "tool_use_id": f"toolu_bench_{next(counter)}"}
            ).encode()

        def payload_without_id() -> bytes:
            data = {**base_payload, "tool_use_id": f"toolu_bench_{next(counter)}"}
            data.pop("session_id")
            return json.dumps(data).encode()

        contenders: dict[str, Callable[[], float]] = {
            "(a) python -I -S -c pass": lambda: timed([python, "-I", "-S", "-c", "pass"], b"", env),
            "(b) minimal stdlib hook (json+sqlite3 WAL)": lambda: timed(
                [python, str(script), str(minimal_db)], payload(), env
            ),
            "tether-gate hook --harness claude-code": lambda: timed(
                [gate, "hook", "--harness", "claude-code"], payload(), env
            ),
            "the same, no session id (process fallback)": lambda: timed(
                [gate, "hook", "--harness", "claude-code"], payload_without_id(), env
            ),
            "the same, belt off (TETHER_POLICY=off)": lambda: timed(
                [gate, "hook", "--harness", "claude-code"], payload(), belt_off
            ),
        }
        for run in contenders.values():  # warm up: byte-compile, page cache, db creation
            for _ in range(5):
                run()
        samples: dict[str, list[float]] = {name: [] for name in contenders}
        for _ in range(args.runs):
            for name, run in contenders.items():
                samples[name].append(run())
        used = sqlite3.connect(home / "gate.db").execute("SELECT SUM(calls_used) FROM sessions")
        counted = used.fetchone()[0]

    print(f"tether-gate latency, {args.runs} calls each, interleaved ({os.cpu_count()} cpus)")
    print(f"  gate: {gate}")
    for name, values in samples.items():
        print(describe(name, values))
    a, b, g, f, off = (statistics.median(v) for v in samples.values())
    print(f"  ratio gate / (b) = {g / b:5.2f}x   (target <= 1.15x)")
    print(f"  ratio gate / (a) = {g / a:5.2f}x   (target <= 3x)")
    print(f"  ratio fallback / (b) = {f / b:5.2f}x")
    print(f"  ratio gate / belt off = {g / off:5.2f}x   (the command belt's own cost)")
    print(f"  calls the gate counted: {counted} (warm-up included)")


if __name__ == "__main__":
    main()
