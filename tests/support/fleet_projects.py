"""Fleet projects for tests and benchmarks: a bare git repository with a board.

Each project has a ``tether.toml`` whose profile is the scripted harness (a
real process that fakes only the model), four level-2 sources that answer
"nothing new" (two folders, two tiny commands), and ``units`` ACTIONABLE
tickets created one after the other, so the loop takes them in that order.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tether.board import Board, NewTicket, State

EMPTY_SOURCE = 'import json; print(json.dumps({"status": "empty", "items": []}))'

CONFIG = """\
[profiles.scripted]
harness = "scripted"
args = {args}
default = true

[loop]
board = "tickets"
guard_interval = "1h"

[loop.sources."memory.organic"]
kind = "command"
command = {organic}

[loop.sources."memory.curated"]
kind = "command"
command = {curated}
"""


@dataclass(frozen=True)
class FleetProject:
    name: str
    bare: Path  # the repository the fleet clones and pushes to
    url: str
    titles: tuple[str, ...]  # the tickets, in the order the loop takes them

    def remote_log(self, fmt: str) -> list[str]:
        """The remote's ``main``, one commit per ``--format`` line (``%s``: subjects)."""
        return _git(self.bare, "log", f"--format={fmt}", "main").splitlines()


def _git(cwd: Path, *args: str) -> str:
    env = {
        "GIT_AUTHOR_NAME": "test",
        "GIT_AUTHOR_EMAIL": "test@localhost",
        "GIT_COMMITTER_NAME": "test",
        "GIT_COMMITTER_EMAIL": "test@localhost",
        "PATH": "/usr/bin:/bin:/usr/local/bin",
        "HOME": str(cwd),
    }
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def make_project(
    root: Path,
    name: str,
    *,
    units: int = 5,
    steps: int = 2,
    step_delay: float = 0.0,
    extra_args: tuple[str, ...] = (),
) -> FleetProject:
    """A bare repository ``root/NAME.git`` holding a fresh project with ``units`` tickets."""
    import json

    work = root / f"{name}-src"
    work.mkdir(parents=True)
    args = ["--format", "claude-code", "--steps", str(steps)]
    if step_delay:
        args += ["--step-delay", str(step_delay)]
    args += list(extra_args)
    organic = [sys.executable, "-c", EMPTY_SOURCE]
    (work / "tether.toml").write_text(
        CONFIG.format(
            args=json.dumps(args), organic=json.dumps(organic), curated=json.dumps(organic)
        ),
        encoding="utf-8",
    )
    decisions = work / "_control-center" / "_DECISIONS"
    decisions.mkdir(parents=True)
    (decisions / "DECIDED-AND-DONE.md").write_text("# Decided and done\n", encoding="utf-8")
    model = work / "_control-center" / "_TOM-lm"
    model.mkdir(parents=True)
    (model / "README.md").write_text("# Patterns\n\n(none yet)\n", encoding="utf-8")
    (work / ".gitignore").write_text(".tether/\n", encoding="utf-8")
    board = Board(work / "tickets", work)
    board.ensure()
    start = datetime(2026, 1, 1, 9, 0, tzinfo=UTC)
    titles = tuple(f"{name} unit {i}" for i in range(1, units + 1))
    for i, title in enumerate(titles):
        unit = NewTicket(title, state=State.ACTIONABLE, body=f"Unit {i + 1} of {name}.\n")
        board.create(unit, created=start + timedelta(minutes=i))
    for folder in board.root.rglob("*"):
        if folder.is_dir() and not any(folder.iterdir()):
            (folder / ".gitkeep").touch()
    _git(work, "init", "--quiet", "--initial-branch", "main")
    _git(work, "add", "--all")
    _git(work, "commit", "--quiet", "-m", f"{name}: a board with {units} units")
    bare = root / f"{name}.git"
    _git(root, "clone", "--quiet", "--bare", str(work), str(bare))
    return FleetProject(name, bare, f"file://{bare}", titles)


def board_of(project: FleetProject, scratch: Path) -> Board:
    """The board as the project's branch holds it now (a fresh clone into ``scratch``)."""
    target = scratch / f"{project.name}-check"
    if target.exists():
        _git(target, "pull", "--quiet")
    else:
        _git(scratch, "clone", "--quiet", project.url, str(target))
    return Board(target / "tickets", target)
