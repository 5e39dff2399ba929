"""Start-up of ``tether mcp`` to its first tool answer, against a bare ``mcp`` SDK server.

Each sample starts a server process, does the initialize handshake over stdio
and calls one tool; the time is from ``Popen`` to the tool's answer. The
baseline is a bare server on the same SDK (the low-level ``Server`` and the
stdio transport, one no-op tool), started the same way, interleaved sample by
sample in the same run. tether's server is asked ``board_list`` in an empty
project (its cheapest real tool). Targets: tether <= 300 ms, and at most 1.5x
the bare server. It also measures how late ``subagents_wait`` answers a
subagent's state change (a supervised run that starts): the target is within
the poll interval + 1 s. It prints medians and 90th percentiles; it never
asserts a time.

    .venv/bin/python bench/mcp.py [--runs 15]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from tether.testing.mcp_client import StdioClient

TETHER = str(Path(sys.executable).parent / "tether")
POLL_SECONDS = 0.5  # tether.watch.polling.wait_for_change's default poll

BARE_SERVER = """\
import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

TOOL = types.Tool(name="noop", description="no-op", input_schema={"type": "object"})


async def list_tools(ctx, params):
    return types.ListToolsResult(tools=[TOOL])


async def call_tool(ctx, params):
    return types.CallToolResult(content=[types.TextContent(type="text", text="ok")])


server = Server("bare", on_list_tools=list_tools, on_call_tool=call_tool)


async def main():
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


anyio.run(main)
"""

CONFIG = """\
[profiles.hang]
harness = "scripted"
args = ["--format", "claude-code", "--steps", "3", "--hang-before-result", "1"]
default = true
"""


CPU: dict[str, list[float]] = {}


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def first_answer(argv: list[str], cwd: Path, tool: str, env: dict[str, str]) -> float:
    """Wall time to the first answer; the server's whole CPU time goes to ``CPU[tool]``."""
    cpu = _children_cpu()
    start = time.perf_counter()
    with StdioClient(argv, cwd=cwd, env=env) as client:
        client.initialize()
        result = client.call(tool, {})
        elapsed = time.perf_counter() - start
    CPU.setdefault(tool, []).append(_children_cpu() - cpu)
    if result.get("isError"):
        raise SystemExit(f"{tool} failed: {result}")
    return elapsed


def wait_latency(project: Path, env: dict[str, str]) -> float:
    """Seconds from a subagent's start to the answer of a waiting ``subagents_wait``."""
    answered: dict[str, float] = {}
    with StdioClient([TETHER, "mcp"], cwd=project, env=env) as client:
        client.initialize()

        def wait() -> None:
            client.call("subagents_wait", {"timeout": 60})
            answered["at"] = time.monotonic()

        waiting = threading.Thread(target=wait)
        waiting.start()
        time.sleep(1.5)
        run = subprocess.Popen(
            [TETHER, "run", "--unit", "bench", "--prompt", "go", "--timeout", "60"],
            cwd=project,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        started = time.monotonic()
        # the run is a subagent once its record is in the store: from then on the
        # wait can see it; take the moment the record exists as the change
        store = project / ".tether" / "tether.db"
        seen = started
        while waiting.is_alive():
            if store.exists() and _has_run(store):
                seen = time.monotonic()
                break
            time.sleep(0.01)
        waiting.join(60)
        os.killpg(run.pid, 15)
        run.wait(30)
    return answered["at"] - seen


def _has_run(store: Path) -> bool:
    import sqlite3

    try:
        conn = sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=1)
        try:
            return bool(conn.execute("SELECT 1 FROM runs LIMIT 1").fetchone())
        finally:
            conn.close()
    except sqlite3.Error:
        return False


def describe(name: str, samples: list[float]) -> str:
    ordered = sorted(samples)
    p90 = ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]
    median = statistics.median(samples) * 1000
    return f"{name:<14} median {median:7.1f} ms   p90 {p90 * 1000:7.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        bare = root / "bare_server.py"
        bare.write_text(BARE_SERVER, encoding="utf-8")
        project = root / "project"
        project.mkdir()
        (project / "tether.toml").write_text(CONFIG, encoding="utf-8")
        env = {k: v for k, v in os.environ.items() if not k.startswith("TETHER_")}
        env["TETHER_HOME"] = str(project / ".tether")
        # one of each first, so both start from warm caches and compiled modules
        first_answer([sys.executable, str(bare)], root, "noop", env)
        first_answer([TETHER, "mcp"], project, "board_list", env)
        ours: list[float] = []
        base: list[float] = []
        for _ in range(args.runs):
            base.append(first_answer([sys.executable, str(bare)], root, "noop", env))
            ours.append(first_answer([TETHER, "mcp"], project, "board_list", env))
        print(f"start-up to first tool answer, {args.runs} runs each, interleaved:")
        print(describe("bare SDK", base))
        print(describe("tether mcp", ours))
        ratio = statistics.median(ours) / statistics.median(base)
        print(f"tether / bare: {ratio:.2f}x (target <= 1.5x); tether median target <= 300 ms")
        cpu_base = statistics.median(CPU["noop"][1:])
        cpu_ours = statistics.median(CPU["board_list"][1:])
        print(
            f"CPU time of the whole server process (start to exit), median: bare "
            f"{cpu_base * 1000:.0f} ms, tether {cpu_ours * 1000:.0f} ms "
            f"({cpu_ours / cpu_base:.2f}x)"
        )
        latency = wait_latency(project, env)
        print(
            f"subagents_wait answered a subagent's start {latency * 1000:.0f} ms after it "
            f"(target <= poll {POLL_SECONDS:g} s + 1 s)"
        )
        print(f"load average while measuring: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
