"""Helpers for the watch tests: a private tmux server, a recording orchestrator, subagents."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

from tether.watch.tmux import Tmux

HERE = Path(__file__).resolve().parent
RECORDER = HERE / "recorder.py"
PYTHON = sys.executable
TETHER = str(Path(sys.executable).parent / "tether")
TETHER_GATE = str(Path(sys.executable).parent / "tether-gate")
T = TypeVar("T")


def wait_until(
    probe: Callable[[], T | Literal[False] | None],
    timeout: float = 10.0,
    every: float = 0.05,
    what: str = "",
) -> T:
    """Poll ``probe`` until it returns something truthy; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what or probe}")
        time.sleep(every)


def agent_argv(*args: str) -> list[str]:
    return [PYTHON, "-m", "tether.harnesses.scripted", *args, "--", "Work on the unit."]


@dataclass
class Recording:
    path: Path

    def lines(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        out = []
        for raw in self.path.read_text("utf-8").splitlines():
            entry = json.loads(raw)
            if entry["line"] != "<ready>":
                out.append(entry)
        return out

    def ready(self) -> bool:
        return self.path.exists() and "<ready>" in self.path.read_text("utf-8")


# Runs a program with SIGCHLD blocked (the mask outlives exec): a tmux server started so
# never hears that a pane's process ended, as a tmux before 3.6 built with libutempter
# misses it when the process ends while another pane closes.
DEAF_TO_CHILDREN = [
    PYTHON,
    "-c",
    "import os, signal, sys; signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD}); "
    "os.execvp(sys.argv[1], sys.argv[1:])",
]


@dataclass
class TmuxLab:
    """A tmux server of its own (``tmux -L <unique>``), killed at teardown.

    ``hears_children=False`` starts the server deaf to its panes' processes ending: it
    lists such a pane dead without its status and leaves the process unreaped.
    """

    root: Path
    socket: str = field(default_factory=lambda: f"tether-test-{uuid.uuid4().hex[:10]}")
    hears_children: bool = True

    def __post_init__(self) -> None:
        self.tmux = Tmux(self.socket)
        self._started = False

    def run(self, *args: str, starts_server: bool = False) -> str:
        argv = self.tmux.argv(*args)
        if starts_server and not self.hears_children:
            argv = [*DEAF_TO_CHILDREN, *argv]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=10, check=True)
        return done.stdout.strip()

    def window(self, cwd: Path, argv: Sequence[str]) -> str:
        """A new window running ``argv`` (no shell of tmux's) in ``cwd``; returns its pane id."""
        cwd.mkdir(parents=True, exist_ok=True)
        if not self._started:
            self._started = True
            return self.run(
                "new-session",
                "-d",
                "-s",
                "lab",
                "-x",
                "220",
                "-y",
                "50",
                "-c",
                str(cwd),
                "-P",
                "-F",
                "#{pane_id}",
                *argv,
                starts_server=True,
            )
        return self.run(
            "new-window", "-d", "-t", "lab", "-c", str(cwd), "-P", "-F", "#{pane_id}", *argv
        )

    def orchestrator(self, name: str = "orchestrator") -> tuple[str, Recording]:
        out = self.root / f"{name}.jsonl"
        recording = Recording(out)
        pane = self.window(self.root / name, [PYTHON, str(RECORDER), str(out)])
        wait_until(recording.ready, what="the recorder to read its terminal")
        return pane, recording

    def subagent(self, folder: Path, agent_args: Sequence[str], then: str = "read -r done") -> str:
        """A pane in ``folder`` whose shell runs the scripted agent, then ``then``.

        ``bash -c "agent > log; read"``: the pane's current command is ``bash``
        all along, the agent a child of it while it runs.
        """
        log = folder / "agent.jsonl"
        script = f"{shlex.join(agent_argv(*agent_args))} > {shlex.quote(str(log))}; {then}"
        return self.window(folder, ["bash", "-c", script])

    def kill(self) -> None:
        subprocess.run(self.tmux.argv("kill-server"), capture_output=True, timeout=10, check=False)

    def restart(self) -> None:
        """Kill the server; the next window starts a new one on the same socket (pane ids anew)."""
        self.kill()

        def gone() -> bool:
            done = subprocess.run(
                self.tmux.argv("list-sessions"), capture_output=True, timeout=10, check=False
            )
            return done.returncode != 0

        wait_until(gone, what="the tmux server to exit")
        self._started = False


def write_project(root: Path, lab: TmuxLab, subagents: Path, **watch: Any) -> Path:
    """A project folder with a tether.toml whose [watch] section points at the lab."""
    root.mkdir(parents=True, exist_ok=True)
    values = {
        "subagents_folders": [str(subagents)],
        "tmux_socket": lab.socket,
        **watch,
    }
    lines = ["[watch]"]
    for key, value in values.items():
        lines.append(f"{key} = {json.dumps(value)}")
    (root / "tether.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def gate_event(session: str, event: str, cwd: Path, **fields: Any) -> None:
    """One real hook call of the gate, as Claude Code would make it."""
    payload = {"session_id": session, "hook_event_name": event, "cwd": str(cwd), **fields}
    subprocess.run(
        [TETHER_GATE, "hook", "--harness", "claude-code"],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
        cwd=cwd,
    )
