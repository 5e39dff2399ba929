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

    def configure(self, commands: Sequence[str], extra: str = "") -> None:
        (self.root / "commands.txt").write_text("\n".join(commands) + "\n", encoding="utf-8")
        args = ["--format", "claude-code", "--commands-file", str(self.root / "commands.txt")]
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


@pytest.fixture
def sandbox_project(tmp_path: Path) -> SandboxProject:
    root = tmp_path / "work"
    root.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    git = ["git", "-C", str(root), "-c", "user.email=t@example.invalid", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], check=True)
    (root / ".claude").mkdir()
    (root / ".claude" / "settings.json").write_text("{}\n", encoding="utf-8")
    project = SandboxProject(root, outside)
    project.configure(["true"])
    added = project.tether(
        "board", "add", "Push the release", "--state", "USER/approval", "--needs", "a yes"
    )
    assert added.returncode == 0, added.stderr
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "start"], check=True)
    return project
