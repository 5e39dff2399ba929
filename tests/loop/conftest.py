"""A project with a board, four sources and a fake clock, for driving the loop.

The model is the only thing faked: runs go through the real supervisor with
the scripted harness, checks and command sources are real subprocesses, the
store is real SQLite. Command sources are small Python scripts on a ``bin/``
folder that each test puts on PATH (or leaves off it: then they are missing).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tether.board import Board, State, Ticket
from tether.clock import FakeClock
from tether.loop import Loop, open_loop
from tether.loop.sources import Location, Reading, Source

START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
TETHER = str(Path(sys.executable).parent / "tether")

BASE_TOML = """\
[loop]
board = "tickets"
todo_files = ["TODO.md"]
guard_interval = "15m"
ticket_budgets = true
check_timeout = "5s"
source_timeout = "10s"

[loop.sources."decisions.ledger"]
kind = "files"
path = "_control-center/_DECISIONS"

[loop.sources."user.model"]
kind = "files"
path = "_control-center/_TOM-lm"

[loop.sources."memory.organic"]
kind = "command"
command = ["organic-memory", "--json"]

[loop.sources."memory.curated"]
kind = "command"
command = ["curated-memory", "working", "--json"]
"""

# The agent of the tests, chosen explicitly: an unconfigured project only
# demonstrates with the built-in scripted profile and records nothing.
SCRIPTED_PROFILE = """
[profiles.scripted]
harness = "scripted"
args = ["--format", "claude-code", "--steps", "5"]
default = true
"""


def write_script(path: Path, output: Any, *, exit_code: int = 0, sleep: float = 0.0) -> Path:
    """An executable Python script that prints ``output`` (JSON unless a str) and exits."""
    text = output if isinstance(output, str) else json.dumps(output)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"#!{sys.executable}\n"
        "import sys, time\n"
        f"time.sleep({sleep!r})\n"
        f"sys.stdout.write({text!r})\n"
        f"sys.exit({exit_code})\n",
        encoding="utf-8",
    )
    path.chmod(0o755)
    return path


class Spy:
    """Wraps a source and counts its locate and read calls."""

    def __init__(self, inner: Source) -> None:
        self.inner = inner
        self.role = inner.role
        self.kind = inner.kind
        self.locates = 0
        self.reads = 0

    def locate(self) -> Location:
        self.locates += 1
        return self.inner.locate()

    def read(self, location: Location) -> Reading:
        self.reads += 1
        return self.inner.read(location)


@dataclass
class Project:
    root: Path
    home: Path
    clock: FakeClock
    extra_toml: str = ""
    path_dirs: list[Path] = field(default_factory=list)
    loops: list[Loop] = field(default_factory=list)

    @property
    def bin(self) -> Path:
        return self.root / "bin"

    @property
    def board(self) -> Board:
        return Board(self.root / "tickets", self.root, clock=self.clock)

    @property
    def decisions(self) -> Path:
        return self.root / "_control-center" / "_DECISIONS"

    @property
    def profile(self) -> Path:
        return self.root / "_control-center" / "_TOM-lm"

    def write_config(self, extra: str = "", *, base: str = BASE_TOML, profile: bool = True) -> None:
        """``base`` + ``extra``, plus the scripted profile unless ``extra`` names profiles."""
        self.extra_toml = extra
        chosen = SCRIPTED_PROFILE if profile and "[profiles." not in extra else ""
        (self.root / "tether.toml").write_text(base + extra + chosen, encoding="utf-8")

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env["TETHER_HOME"] = str(self.home)
        env["PATH"] = os.pathsep.join([*map(str, self.path_dirs), env.get("PATH", "")])
        return env

    def tether(
        self, *args: str, input: str | None = None, timeout: float = 120
    ) -> subprocess.CompletedProcess[str]:
        """``tether ARGS`` in the project's folder, with its environment."""
        return subprocess.run(
            [TETHER, *args],
            input=input,
            cwd=self.root,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def run_count(self) -> int:
        """How many runs the project's store holds."""
        from tether.store import connect
        from tether.store.runs import list_runs

        conn = connect(self.home)
        try:
            return len(list_runs(conn))
        finally:
            conn.close()

    def all_sources_ready(self, *, organic: Any = None, curated: Any = None) -> None:
        """All four sources present and empty (or with the given command outputs)."""
        self.decisions.mkdir(parents=True, exist_ok=True)
        (self.decisions / "DECIDED-AND-DONE.md").touch()
        self.profile.mkdir(parents=True, exist_ok=True)
        write_script(self.bin / "organic-memory", organic or {"status": "empty", "items": []})
        write_script(self.bin / "curated-memory", curated or {"status": "empty", "items": []})
        if self.bin not in self.path_dirs:
            self.path_dirs.append(self.bin)

    def open(self, *, spy: bool = False, **kwargs: Any) -> Loop:
        loop = open_loop(self.root, env=self.env(), clock=self.clock, **kwargs)
        if spy:
            loop.sources = [Spy(s) for s in loop.sources]
        self.loops.append(loop)
        return loop

    def add(
        self,
        title: str,
        state: State = State.ACTIONABLE,
        reason: str | None = None,
        *,
        body: str = "",
        priority: str = "P2",
        **front: Any,
    ) -> Ticket:
        board = self.board
        board.ensure()
        return board.add(
            title, priority=priority, body=body, state=state, reason=reason, front=front or None
        )

    def note(self, name: str, text: str) -> Path:
        path = self.root / "tickets" / "INBOX" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    def location(self, ticket_id: str) -> str:
        return self.board.get(ticket_id).location


@pytest.fixture
def project(tmp_path: Path, tether_home: Path) -> Iterator[Project]:
    root = tmp_path / "proj"
    root.mkdir()
    made = Project(root=root, home=tether_home, clock=FakeClock(START))
    made.write_config()
    made.board.ensure()
    yield made
    for loop in made.loops:
        loop.close()


def spies(loop: Loop) -> Mapping[str, Spy]:
    # duck-typed: pytest may load this module twice (as a conftest and by import)
    return {s.role: s for s in loop.sources if hasattr(s, "reads")}  # type: ignore[misc]


def reads(loop: Loop) -> dict[str, int]:
    return {role: spy.reads for role, spy in spies(loop).items()}


def roles(items: Sequence[Any]) -> list[str]:
    return [getattr(i, "role", i) for i in items]
