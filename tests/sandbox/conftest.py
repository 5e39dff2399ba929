"""A project whose scripted agent runs given shell commands, one per tool step.

The project has no ``[sandbox]`` table: what the tests show holds by default.
Its tether home is the default one, ``.tether`` inside the project, and it has
a board with a ticket waiting for a person's approval, a Claude Code settings
file and a git repository: everything an agent must not touch is in reach of
its work folder.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

TETHER = str(Path(sys.executable).parent / "tether")
SHELL_WRAP = "sh -c {}"


def sh(script: str) -> str:
    """One ``--commands-file`` line that runs ``script`` in ``sh`` (the file has no shell)."""
    return "sh -c " + json.dumps(script)


@dataclass
class SandboxProject:
    root: Path
    outside: Path  # a folder next to the project: the agent must not reach it

    @property
    def home(self) -> Path:
        return self.root / ".tether"

    @property
    def ticket(self) -> Path:
        (found,) = (self.root / "tickets" / "USER" / "approval").glob("T-*.md")
        return found

    def env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("TETHER_")}
        env["TETHER_USER_CONFIG"] = str(self.outside / "no-user-config.toml")
        env.update(extra or {})
        return env

    def configure(
        self, commands: Sequence[str], extra: str = "", agent_args: Sequence[str] = ()
    ) -> None:
        (self.root / "commands.txt").write_text("\n".join(commands) + "\n", encoding="utf-8")
        args = ["--format", "claude-code", "--commands-file", str(self.root / "commands.txt")]
        args += agent_args
        (self.root / "tether.toml").write_text(
            "kill_grace_seconds = 1\n"
            + extra
            + f'\n[profiles.s]\nharness = "scripted"\nargs = {json.dumps(args)}\ndefault = true\n',
            encoding="utf-8",
        )

    def tether(
        self, *args: str, env: Mapping[str, str] | None = None, timeout: float = 120
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [TETHER, *args],
            cwd=self.root,
            env=self.env(env),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def run(
        self, *flags: str, env: Mapping[str, str] | None = None
    ) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
        done = self.tether("run", "--json", "--prompt", "go", *flags, env=env)
        assert done.stdout, done.stderr
        return done, json.loads(done.stdout)

    def results(self, record: Mapping[str, Any]) -> list[str]:
        """What each tool call returned to the agent, in order."""
        found = []
        for line in Path(record["run_dir"], "events.jsonl").read_text().splitlines():
            event = json.loads(line)
            if event.get("type") != "user":
                continue
            for part in event["message"]["content"]:
                if part.get("type") == "tool_result":
                    found.append(str(part.get("content")))
        return found

    @staticmethod
    def findings(record: Mapping[str, Any]) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(Path(record["run_dir"], "sandbox.json").read_text())
        return data


def digest(*paths: Path) -> dict[str, str]:
    """What each file holds (a folder: its files), to show nothing changed."""
    found = {}
    for path in paths:
        files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
        for file in files:
            found[str(file)] = hashlib.sha256(file.read_bytes()).hexdigest()
    return found


def _git(root: Path) -> list[str]:
    return ["git", "-C", str(root), "-c", "user.email=t@example.invalid", "-c", "user.name=t"]


@pytest.fixture(scope="session")
def _project_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project as every test starts with it, made once per test process: the board's
    ticket is added by ``tether board add`` (about 0.3 s of CPU), which each test then
    does not pay again. ``sandbox_project`` copies it."""
    base = tmp_path_factory.mktemp("sandbox-project")
    root = base / "work"
    root.mkdir()
    (base / "home").mkdir()
    project = SandboxProject(root, base)
    subprocess.run([*_git(root), "init", "-q"], check=True)
    (root / ".claude").mkdir()
    (root / ".claude" / "settings.json").write_text("{}\n", encoding="utf-8")
    project.configure(["true"])
    # the test's own environment is not set yet: no user's HOME, XDG folders or tether's
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TETHER_", "XDG_"))}
    env |= {"TETHER_USER_CONFIG": str(base / "no-user-config.toml"), "HOME": str(base / "home")}
    added = subprocess.run(
        [
            TETHER,
            "board",
            "add",
            "Push the release",
            "--state",
            "USER/approval",
            "--needs",
            "a yes",
        ],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert added.returncode == 0, added.stderr
    return root


@pytest.fixture
def sandbox_project(tmp_path: Path, _project_template: Path) -> SandboxProject:
    root = tmp_path / "work"
    shutil.copytree(_project_template, root, symlinks=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    project = SandboxProject(root, outside)
    project.configure(["true"])  # its commands file in this copy
    git = _git(root)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "start"], check=True)
    return project
