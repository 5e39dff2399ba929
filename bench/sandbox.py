"""What the sandbox costs: its start per run, and a gate call over the run's socket.

Two measurements, each interleaved call by call against its baseline in the
same run:

1. Start cost. A program that exits at once (``true``) started the way
   ``tether run`` starts an agent: bare (``spawn_agent`` without a sandbox)
   against inside a sandbox (the proxy listening, bubblewrap, the launcher,
   then the program; the sandbox's end report read). The figure is the median
   of the sandboxed starts minus the median of the bare ones (goal: at most
   50 ms).
2. A gate call. ``tether-gate hook --harness claude-code`` with the recorded
   PreToolUse payload, as today (it counts in ``gate.db`` itself) against the
   same call inside a sandboxed run's environment (``TETHER_GATE_SOCKET``: it
   asks the run's supervisor, here a ``GateServer`` in this process, which
   counts). Ratio of the medians (goal: at most 1.15x).

It prints figures and never asserts a time.

    .venv/bin/python bench/sandbox.py [--runs 100]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository, for bench.*

from bench.gate import PAYLOAD, compile_gate, describe, gate_executable, timed

from tether.gate.counter import set_session_budget
from tether.gate.serve import GateServer
from tether.runs.process import spawn_agent
from tether.sandbox.backend import backend_for_this_machine
from tether.sandbox.hosts import Host
from tether.sandbox.runtime import Sandbox
from tether.sandbox.spec import SandboxSpec

TRUE = shutil.which("true") or "/bin/true"


def bare_start(work: Path) -> float:
    started = time.perf_counter()
    agent = spawn_agent([TRUE], env=dict(os.environ), cwd=work, harness="bare", kill_grace=1.0)
    agent.popen.wait()
    agent.close()
    return time.perf_counter() - started


def sandboxed_start(work: Path) -> float:
    started = time.perf_counter()
    spec = SandboxSpec(cwd=work, writable=(work,))
    sandbox = Sandbox(backend_for_this_machine(), spec, (Host("127.0.0.1", 9),))
    agent = spawn_agent(
        [TRUE],
        env=sandbox.env(os.environ),
        cwd=work,
        harness="bare",
        kill_grace=1.0,
        sandbox=sandbox,
    )
    sandbox.started()
    agent.popen.wait()
    agent.close()
    report = sandbox.close()
    elapsed = time.perf_counter() - started
    if report.status != 0:
        sys.exit(f"bench: the sandboxed start failed (status {report.status})")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100, help="samples per contender")
    args = parser.parse_args()
    why = backend_for_this_machine().unavailable()
    if why is not None:
        sys.exit(f"bench: no sandbox here: {why}")
    gate = gate_executable()
    compile_gate()
    base_payload = json.loads(PAYLOAD.read_text())
    counter = iter(range(10**9))

    def payload() -> bytes:
        return json.dumps({**base_payload, "tool_use_id": f"toolu_bench_{next(counter)}"}).encode()

    with tempfile.TemporaryDirectory(prefix="tether-bench-sbx-") as tmp:
        work = Path(tmp) / "work"
        work.mkdir()
        home = Path(tmp) / "home"
        home.mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("TETHER_", "CLAUDE"))}
        env |= {"TETHER_HOME": str(home), "TETHER_GATE_BUDGET": "1000000"}
        session = "bench-run-session"
        set_session_budget(home, session, calls=1_000_000)
        socket = Path(tempfile.mkdtemp(prefix="tbs-")) / "gate.sock"
        server = GateServer(str(socket), session, {"TETHER_HOME": str(home)}).start()
        over_socket = {**env, "TETHER_GATE_SOCKET": str(socket)}
        hook = [gate, "hook", "--harness", "claude-code"]
        contenders: dict[str, Callable[[], float]] = {
            "bare start of `true` (spawn_agent)": lambda: bare_start(work),
            "sandboxed start of `true` (bwrap+launcher)": lambda: sandboxed_start(work),
            "gate call today (counts in gate.db)": lambda: timed(hook, payload(), env),
            "gate call over the run's socket": lambda: timed(hook, payload(), over_socket),
        }
        try:
            for run in contenders.values():  # warm up: page cache, bytecode, the database
                for _ in range(5):
                    run()
            samples: dict[str, list[float]] = {name: [] for name in contenders}
            for _ in range(args.runs):
                for name, run in contenders.items():
                    samples[name].append(run())
        finally:
            server.stop()
            shutil.rmtree(socket.parent, ignore_errors=True)

    print(f"sandbox cost, {args.runs} samples each, interleaved ({os.cpu_count()} cpus)")
    for name, values in samples.items():
        print(describe(name, values))
    bare, boxed, today, socket_call = (statistics.median(v) for v in samples.values())
    print(f"  sandbox start cost = {(boxed - bare) * 1000:6.2f} ms per run   (goal <= 50 ms)")
    print(f"  ratio gate over socket / today = {socket_call / today:5.2f}x   (goal <= 1.15x)")


if __name__ == "__main__":
    main()
