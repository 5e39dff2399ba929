"""``tether mcp``: a tool call over one session, and start-up to the first answer, against a
bare ``mcp`` SDK server.

**A call over one session.** One server, one session, as an agent CLI keeps it:
``--calls`` calls of each tool (after a few to warm up), in a project with a
board of 50 tickets and a generated wiki of 300 pages; the baseline is a bare
server on the same SDK answering a no-op tool, asked the same way in the same
run. Targets: p50 <= 10 ms for ``board_show``, ``wiki_search``, ``wiki_read``
and ``board_list``; <= 50 ms for ``subagents_list``.

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

    .venv/bin/python bench/mcp.py [--runs 15] [--calls 200]
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.mcp_client import StdioClient  # noqa: E402
from tests.wikigen import generate  # noqa: E402

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


LATENCY_CONFIG = """\
[loop]
board = "tickets"

[wiki]
root = "kb"

[profiles.scripted]
harness = "scripted"
default = true
"""
TARGETS_MS = {
    "board_show": 10.0,
    "wiki_search": 10.0,
    "wiki_read": 10.0,
    "board_list": 10.0,
    "subagents_list": 50.0,
}


def latency_project(root: Path, env: dict[str, str]) -> dict[str, dict[str, object]]:
    """A project with a board and a wiki; the calls to time, by tool."""
    project = root / "latency"
    project.mkdir()
    (project / "tether.toml").write_text(LATENCY_CONFIG, encoding="utf-8")
    generate(project / "kb", pages=300)
    ids = []
    with StdioClient([TETHER, "mcp"], cwd=project, env=env) as client:
        client.initialize()
        for k in range(50):
            added = client.call("board_add", {"title": f"ticket {k}", "body": "text " * 40})
            ids.append(added["structuredContent"]["id"])
    return {
        "board_show": {"ticket_id": ids[25]},
        "wiki_search": {"query": "beltelnixka latency"},
        "wiki_read": {"page_id": "concept-00000"},
        "board_list": {},
        "subagents_list": {},
    }


def _timed(client: StdioClient, tool: str, args: dict[str, object]) -> float:
    start = time.perf_counter()
    result = client.call(tool, args)
    elapsed = time.perf_counter() - start
    if result.get("isError"):
        raise SystemExit(f"{tool} failed: {result}")
    return elapsed


def per_call(root: Path, bare: Path, env: dict[str, str], calls: int) -> None:
    """Round after round, one bare no-op then one call of each tool: a busy moment of the
    machine falls on the baseline and the tools alike."""
    project = root / "latency"
    cases = latency_project(root, env)
    samples: dict[str, list[float]] = {"bare SDK no-op": [], **{tool: [] for tool in cases}}
    with (
        StdioClient([sys.executable, str(bare)], cwd=root, env=env) as baseline,
        StdioClient([TETHER, "mcp"], cwd=project, env=env) as client,
    ):
        baseline.initialize()
        client.initialize()
        for round_ in range(calls + 5):  # the first 5 rounds warm up: imports, the open index
            took = _timed(baseline, "noop", {})
            times = {tool: _timed(client, tool, args) for tool, args in cases.items()}
            if round_ >= 5:
                samples["bare SDK no-op"].append(took)
                for tool, elapsed in times.items():
                    samples[tool].append(elapsed)
    base_p50 = statistics.median(samples["bare SDK no-op"])
    print(f"a tool call over one session, {calls} rounds (p50, p90; x bare no-op; target):")
    for name, taken in samples.items():
        p50 = statistics.median(taken) * 1000
        target = TARGETS_MS.get(name)
        verdict = ""
        if target is not None:
            verdict = f"   target <= {target:g} ms: {'ok' if p50 <= target else 'MISSED'}"
        print(
            f"  {name:<16} p50 {p50:7.2f} ms   p90 {_p90(taken) * 1000:7.2f} ms"
            f"   {statistics.median(taken) / base_p50:5.1f}x{verdict}"
        )


def _p90(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]


def describe(name: str, samples: list[float]) -> str:
    ordered = sorted(samples)
    p90 = ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]
    median = statistics.median(samples) * 1000
    return f"{name:<14} median {median:7.1f} ms   p90 {p90 * 1000:7.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--calls", type=int, default=200, help="calls per tool over one session")
    parser.add_argument("--only-calls", action="store_true", help="skip the start-up part")
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
        calls_env = {**env, "TETHER_HOME": str(root / "latency" / ".tether")}
        per_call(root, bare, calls_env, args.calls)
        if args.only_calls:
            print(f"load average: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
            return
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
