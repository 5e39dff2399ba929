"""A project in a real git repository with a real bare remote, driven by the scripted agent.

The agent's tool calls come from a commands file (one shell command per step,
run by the scripted agent as real subprocesses); only the model is faked.
``person`` runs ``tether`` as a person would: outside every agent's process tree
and without the variables by which an agent announces itself.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from tests.loop.conftest import START, Project
from tests.outside_agents import detached, without_agent_vars

from tether.clock import FakeClock

TETHER = str(Path(sys.executable).parent / "tether")


def git(*args: str, cwd: Path) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=T", "-c", "user.email=t@example.org", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return done.stdout.strip()


@dataclass
class Repo:
    project: Project
    remote: Path
    commands: Path

    @property
    def root(self) -> Path:
        return self.project.root

    def agent_does(self, *lines: str, extra_toml: str = "") -> None:
        """The agent's tool steps, one shell command each (run with ``sh -c``)."""
        self.commands.write_text(
            "".join(f"sh -c {_quote(line)}\n" for line in lines), encoding="utf-8"
        )
        self.project.write_config(
            extra_toml
            + '\n[profiles.worker]\nharness = "scripted"\n'
            + f'args = ["--format", "claude-code", "--commands-file", "{self.commands}"]\n'
            + "default = true\n"
        )

    def head(self, where: Path | None = None, ref: str = "main") -> str:
        return git("rev-parse", ref, cwd=where or self.root)

    def remote_head(self) -> str:
        return git("rev-parse", "main", cwd=self.remote)

    def tether(
        self, *args: str, env: dict[str, str] | None = None, timeout: float = 120
    ) -> subprocess.CompletedProcess[str]:
        """``tether ARGS`` in the project, in the test runner's tree (like an agent would)."""
        return subprocess.run(
            [TETHER, *args],
            cwd=self.root,
            env=env or self.project.env(),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def person(self, *args: str) -> subprocess.CompletedProcess[str]:
        """``tether ARGS`` as a person at a terminal: outside every agent's process tree."""
        return subprocess.run(
            detached([TETHER, *args]),
            cwd=self.root,
            env=without_agent_vars(self.project.env()),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )


def _quote(text: str) -> str:
    import shlex

    return shlex.quote(text)


@pytest.fixture
def repo(tmp_path: Path, tether_home: Path) -> Iterator[Repo]:
    root = tmp_path / "proj"
    root.mkdir()
    project = Project(root=root, home=tether_home, clock=FakeClock(START))
    project.path_dirs.append(Path(TETHER).parent)  # the agent's steps call `tether`
    project.write_config()
    project.board.ensure()
    remote = tmp_path / "remote.git"
    git("init", "--bare", "-b", "main", str(remote), cwd=tmp_path)
    git("init", "-b", "main", cwd=root)
    git("config", "user.name", "Agent", cwd=root)
    git("config", "user.email", "agent@example.org", cwd=root)
    (root / ".gitignore").write_text("tickets/\nbin/\ntether.toml\n")
    (root / "README.md").write_text("# The project\n")
    git("add", "README.md", ".gitignore", cwd=root)
    git("commit", "-m", "first", cwd=root)
    git("remote", "add", "origin", str(remote), cwd=root)
    git("push", "origin", "main", cwd=root)
    made = Repo(project, remote, tmp_path / "commands.txt")
    yield made
    for loop in project.loops:
        loop.close()
