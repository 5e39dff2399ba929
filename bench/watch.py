"""The watchdog with 50 subagents: its CPU share, and how fast a pending tool call wakes.

Setup (all real): a private tmux server; an orchestrator pane running a program
that records every line typed into its terminal with the time; N subagent panes
under a subagents folder, each ``bash -c "scripted agent > log; read"`` with a
live agent process; the daemon ``tether watch`` as its own process, with the
orchestrator registered and idle (it never answers, so every cycle wakes it:
``wake_min_interval = 0``; ``confirm_after = 0``, so an open tool call counts as
waiting for confirmation the moment it appears).

1. Detection delay: during the window, at staggered times, the bench appends a
   tool call (Claude Code's ``tool_use`` line, with a unique command) to one
   subagent's log, exactly as the agent would print it before a confirmation
   dialog. Delay = that moment → the wake naming that command arriving in the
   orchestrator's terminal. Once seen, the call gets its result line. Median and
   max; target: delay <= interval + 1 s.
2. CPU share of the daemon over the window: its CPU time (own, and with the
   tmux clients it ran) divided by wall time, as a share of one core; target
   <= 2 %. Baseline measured in the same run: one bare pass over the process
   table (psutil) plus one ``tmux list-panes`` — the floor for any watcher that
   looks at process trees of tmux panes — per cycle; the ratio is printed.

With a long interval, many calls are open at once and one wake line (at most
``message_max_chars``, here 3000, below the terminal's 4096-byte line limit)
names only some of them; use ``--pending`` to keep them fewer.

Run: .venv/bin/python bench/watch.py [--seconds 60] [--subagents 50] [--interval 5] [--pending N]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.watch.watch_support import TmuxLab

TETHER = str(Path(sys.executable).parent / "tether")


def wait_for(probe: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not probe():
        if time.monotonic() > deadline:
            raise SystemExit(f"bench: timed out waiting for {what}")
        time.sleep(0.05)


def read_lines(path: Path) -> list[dict[str, object]]:
    if not path.exists():
        return []
    return [json.loads(raw) for raw in path.read_text("utf-8").splitlines() if raw.strip()]


def baseline_per_cycle(socket: str, passes: int = 20) -> float:
    """CPU seconds of one process-table pass plus one tmux list-panes (this process + child)."""
    before = psutil.Process().cpu_times()
    for _ in range(passes):
        for proc in psutil.process_iter(["ppid", "name", "create_time"]):
            _ = proc.info
        subprocess.run(
            ["tmux", "-L", socket, "list-panes", "-a", "-F", "#{pane_id}"],
            capture_output=True,
            check=False,
        )
    after = psutil.Process().cpu_times()
    used = (
        after.user
        - before.user
        + after.system
        - before.system
        + after.children_user
        - before.children_user
        + after.children_system
        - before.children_system
    )
    return used / passes


def tool_line(call_id: str, marker: str) -> str:
    return json.dumps(
        {
            "type": "assistant",
            "message": {
                "id": f"msg_{call_id}",
                "content": [
                    {
                        "type": "tool_use",
                        "id": call_id,
                        "name": "Bash",
                        "input": {"command": marker},
                    }
                ],
            },
        }
    )


def result_line(call_id: str) -> str:
    return json.dumps(
        {
            "type": "user",
            "message": {
                "content": [{"type": "tool_result", "tool_use_id": call_id, "content": "ok"}]
            },
        }
    )


def append(path: Path, line: str) -> None:
    with path.open("a", encoding="utf-8") as handle:
        handle.write(line + "\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="measurement window")
    parser.add_argument("--subagents", type=int, default=50)
    parser.add_argument("--interval", type=float, default=5.0, help="the daemon's interval")
    parser.add_argument(
        "--pending",
        type=int,
        default=None,
        help="tool calls to make pending over the window (default: one per "
        "subagent); each one stays open until a wake names it",
    )
    args = parser.parse_args()
    if subprocess.run(["which", "tmux"], capture_output=True, check=False).returncode != 0:
        print("bench: tmux is not installed", file=sys.stderr)
        return 2
    tmp = Path(tempfile.mkdtemp(prefix="tether-bench-watch-"))
    home = tmp / "home"
    env = {**os.environ, "TETHER_HOME": str(home), "TETHER_USER_CONFIG": str(tmp / "none.toml")}
    subagents = tmp / "subagents"
    project = tmp / "project"
    project.mkdir()
    lab = TmuxLab(tmp)
    (project / "tether.toml").write_text(
        "[watch]\n"
        f"interval = {args.interval}\nidle_threshold = 1.0\nwake_min_interval = 0\n"
        "confirm_after = 0\nmessage_max_chars = 3000\n"
        f'subagents_folders = [{json.dumps(str(subagents))}]\ntmux_socket = "{lab.socket}"\n'
    )
    daemon: subprocess.Popen[str] | None = None
    try:
        pane, recording = lab.orchestrator()
        record = recording.path
        logs: list[Path] = []
        for n in range(args.subagents):
            folder = subagents / f"s{n:02d}"
            log = folder / "agent.jsonl"
            lab.subagent(folder, ["--format", "claude-code", "--silent"], then="read -r d")
            logs.append(log)
        subprocess.run(
            [TETHER, "watch", "add-orchestrator", "--tmux-pane", pane],
            cwd=project,
            env=env,
            check=True,
            capture_output=True,
        )
        daemon = subprocess.Popen(
            [TETHER, "watch"],
            cwd=project,
            env=env,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        every = f"while {args.subagents} subagents run"
        wait_for(
            lambda: any(every in str(e["line"]) for e in read_lines(record)),
            60,
            f"a wake that counts all {args.subagents} subagents",
        )
        proc = psutil.Process(daemon.pid)
        cpu0, wall0 = proc.cpu_times(), time.monotonic()
        start = wall0
        last_slot = max(1.0, args.seconds - args.interval - 2.0)
        pending = min(len(logs), args.pending if args.pending is not None else len(logs))
        schedule = [(1.0 + (last_slot - 1.0) * i / max(1, pending - 1), i) for i in range(pending)]
        appeared: dict[int, float] = {}
        delays: dict[int, float] = {}
        seen_lines = 0
        while time.monotonic() - start < args.seconds:
            elapsed = time.monotonic() - start
            for at, i in schedule:
                if i not in appeared and elapsed >= at:
                    append(logs[i], tool_line(f"toolu_bench_{i}", f"bench-{i:02d}-confirm"))
                    appeared[i] = time.time()
            entries = read_lines(record)
            for entry in entries[seen_lines:]:
                text = str(entry["line"])
                for i, t0 in appeared.items():
                    if i not in delays and f"bench-{i:02d}-confirm" in text:
                        delays[i] = float(str(entry["t"])) - t0
                        append(logs[i], result_line(f"toolu_bench_{i}"))
            seen_lines = len(entries)
            time.sleep(0.02)
        cpu1, wall1 = proc.cpu_times(), time.monotonic()
        wall = wall1 - wall0
        own = cpu1.user - cpu0.user + cpu1.system - cpu0.system
        children = (
            cpu1.children_user - cpu0.children_user + cpu1.children_system - cpu0.children_system
        )
        cycles = wall / args.interval
        base = baseline_per_cycle(lab.socket)
    finally:
        if daemon is not None and daemon.poll() is None:
            daemon.send_signal(signal.SIGTERM)
            daemon.communicate(timeout=30)
        lab.kill()
    values = sorted(delays.values())
    print(
        f"watch bench: {args.subagents} subagent processes, interval {args.interval:g} s, "
        f"window {wall:.1f} s (~{cycles:.0f} cycles)"
    )
    print(
        f"  daemon CPU: own {own:.3f} s = {100 * own / wall:.2f} % of one core; "
        f"with its tmux clients {own + children:.3f} s = {100 * (own + children) / wall:.2f} %"
        f"  (target <= 2 %)"
    )
    per_cycle = (own + children) / max(cycles, 1)
    print(
        f"  per cycle: {1000 * per_cycle:.1f} ms CPU; baseline (one psutil pass + one tmux "
        f"list-panes) {1000 * base:.1f} ms; ratio {per_cycle / base:.1f}x"
    )
    if values:
        print(
            f"  detection delay (tool call appears -> wake in the orchestrator's terminal): "
            f"median {statistics.median(values):.2f} s, max {values[-1]:.2f} s over "
            f"{len(values)}/{len(appeared)} pending calls  (target <= interval + 1 = "
            f"{args.interval + 1:g} s)"
        )
    else:
        print("  detection delay: no pending call was seen in a wake")
    ok = values and values[-1] <= args.interval + 1 and (own + children) / wall <= 0.02
    return 0 if ok and len(values) == len(appeared) else 1


if __name__ == "__main__":
    sys.exit(main())
