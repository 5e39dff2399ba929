from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

TETHER = str(Path(sys.executable).parent / "tether")


@dataclass
class Project:
    root: Path
    home: Path
    exec_log: Path

    def write_config(self, agent_args: list[str], extra: str = "") -> None:
        argv = ["--format", "claude-code", *agent_args, "--exec-log", str(self.exec_log)]
        args = json.dumps(argv)
        (self.root / "tether.toml").write_text(
            "kill_grace_seconds = 0.5\nmax_iterations_cap = 100\n\n"
            f'[profiles.cheap]\nharness = "scripted"\nargs = {args}\ndefault = true\n\n'
            f'[profiles.strong]\nharness = "scripted"\nargs = {args}\nstrength = 3\n' + extra,
            encoding="utf-8",
        )

    def tether(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [TETHER, *args],
            cwd=self.root,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def run_json(self, *args: str) -> tuple[int, dict[str, Any]]:
        done = self.tether("run", "--json", *args)
        assert done.stdout, done.stderr
        return done.returncode, json.loads(done.stdout)

    def executed(self) -> list[str]:
        if not self.exec_log.exists():
            return []
        return self.exec_log.read_text().splitlines()


@pytest.fixture
def project(tmp_path: Path, tether_home: Path) -> Project:
    root = tmp_path / "work"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(
        [
            "git",
            "-C",
            str(root),
            "-c",
            "user.email=t@example.invalid",
            "-c",
            "user.name=t",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "start",
        ],
        check=True,
    )
    return Project(root=root, home=tether_home, exec_log=root / "exec.log")


def poll(predicate: Callable[[], bool], timeout: float = 10.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False
