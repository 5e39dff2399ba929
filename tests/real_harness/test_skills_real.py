"""After `tether skills install --all`, every real agent CLI loads tether's skills.

Copilot lists them itself (`copilot skill list --json`). Claude Code, Codex, Pi
and Vibe announce the skills they loaded to the model: the first model request
of a session started in the project names every tether skill with its
description (the scripted model server keeps the request bodies).
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from tether.harnesses.base import Harness, RunSpec
from tether.skills import shipped_skills
from tether.testing.model_server import ModelServer, client_setup

pytestmark = pytest.mark.real_harness

TETHER = str(Path(sys.executable).parent / "tether")
SKILLS = {
    s.name: yaml.safe_load(s.files["SKILL.md"].decode().split("---\n")[1])["description"]
    for s in shipped_skills()
}


def _words(text: str) -> str:
    return " ".join(re.findall(r"[A-Za-z0-9]+", text))


def _project(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    subprocess.run(["git", "init", "-q", str(work)], check=True, timeout=30)
    done = subprocess.run(
        [TETHER, "skills", "install", "--all", "--project-dir", str(work)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return work


def _first_request(
    harness: str, agent_cli: Callable[[str], tuple[Harness, Path]], tmp_path: Path
) -> str:
    adapter, exe = agent_cli(harness)
    work = _project(tmp_path)
    # Pi 1.x reads a project's skills only in a trusted project: the person approves it
    approve = ("--approve",) if harness == "pi-1" else ()
    with ModelServer("steps:1", keep_bodies=True) as server:
        setup = client_setup(adapter.name, tmp_path / "home", server.port)
        args = (*setup.extra_args, *approve)
        spec = RunSpec(prompt="hello", model=setup.model, extra_args=args, cwd=work)
        argv = adapter.build_command(spec)
        argv[0] = str(exe)
        node_dir = Path(shutil.which("node") or "/usr/bin/node").parent
        env = {"PATH": f"{node_dir}{os.pathsep}{os.environ.get('PATH', '')}", **setup.env}
        done = subprocess.run(
            argv,
            cwd=work,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=120,
            check=False,
        )
        agent = [b for b in server.bodies if b"work-loop" in b]
        assert agent, (done.returncode, done.stderr[-2000:])
        return agent[0].decode("utf-8")


@pytest.mark.parametrize("harness", ["claude-code", "codex", "pi", "pi-1", "vibe"])
def test_a_session_announces_every_tether_skill_to_the_model(
    harness: str, agent_cli: Callable[[str], tuple[Harness, Path]], tmp_path: Path
) -> None:
    body = json.loads(_first_request(harness, agent_cli, tmp_path))
    text = html.unescape(json.dumps(body, ensure_ascii=False))
    words = _words(text)
    for name, description in SKILLS.items():
        assert name in text, name
        # a CLI may escape a description (XML, JSON) or cut it: its opening words are there
        assert _words(description)[:60] in words, (name, description[:60])


def test_copilot_lists_every_tether_skill_from_the_project(
    agent_cli: Callable[[str], tuple[Harness, Path]], tmp_path: Path
) -> None:
    _adapter, exe = agent_cli("copilot")
    work = _project(tmp_path)
    setup = client_setup("copilot", tmp_path / "home", 9)
    done = subprocess.run(
        [str(exe), "skill", "list", "--json"],
        cwd=work,
        env={"PATH": os.environ.get("PATH", ""), **setup.env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    listed = {s["name"]: s for s in json.loads(done.stdout)}
    for name, description in SKILLS.items():
        assert listed[name]["source"] == "project"
        assert listed[name]["description"] == description
        # Copilot reads .agents/skills and .claude/skills too; a name found twice counts once
        assert listed[name]["path"] in (
            str(work / ".claude" / "skills" / name),
            str(work / ".agents" / "skills" / name),
        )
    assert len([s for s in json.loads(done.stdout) if s["name"] in SKILLS]) == len(SKILLS)
