"""The built-in level-2 sources: a fresh project proves it is done; each role reads its place.

The fresh project goes through the real commands (``git init``, ``tether
init``, ``tether board init``, ``tether loop tick``) with no agent CLI on PATH.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.loop.conftest import TETHER, Project

from tether.board import State
from tether.loop import tick
from tether.loop.signal import Signal

NO_SOURCES_TOML = '[loop]\nboard = "tickets"\n'


def _fresh_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TETHER_")}
    env["TETHER_USER_CONFIG"] = str(home / "no-user-config.toml")
    env["HOME"] = str(home)
    # git and the Python that runs tether, but no agent CLI
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), "/usr/bin", "/bin"])
    return env


def _run(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False
    )


def test_a_fresh_project_with_nothing_to_do_stops_exhausted(tmp_path: Path) -> None:
    root = tmp_path / "fresh"
    root.mkdir()
    env = _fresh_env(tmp_path)
    assert _run(["git", "init", "--quiet"], root, env).returncode == 0
    init = _run([TETHER, "init"], root, env)
    assert init.returncode == 0, init.stderr
    assert "agent CLIs: none on PATH" in init.stdout
    assert _run([TETHER, "board", "init"], root, env).returncode == 0

    done = _run([TETHER, "loop", "tick"], root, env)
    assert done.returncode == 10, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1].startswith("TETHER-LOOP: STOP (exhausted)")
    assert "level 2: decisions.ledger: empty (no decision folder" in done.stdout
    # asked again, the guard answers; a dry run needs no profile when it starts nothing
    again = _run([TETHER, "loop", "tick", "--dry-run"], root, env)
    assert again.returncode == 12, again.stdout + again.stderr

    # nothing tether keeps for itself shows up for git: only the configuration
    # and the board's own .gitignore, and after a ticket, the ticket
    assert _run([TETHER, "board", "add", "a first ticket"], root, env).returncode == 0
    status = _run(["git", "status", "--porcelain", "--untracked-files=all"], root, env)
    listed = sorted(line[3:] for line in status.stdout.splitlines())
    assert listed[:2] == ["tether.toml", "tickets/.gitignore"], listed
    assert len(listed) == 3 and listed[2].startswith("tickets/INBOX/T-"), listed
    assert (root / ".tether" / "tether.db").is_file()  # the home is there, and ignored


def test_tether_init_never_overwrites_a_configuration(tmp_path: Path) -> None:
    env = _fresh_env(tmp_path)
    (tmp_path / "tether.toml").write_text("# mine\n", encoding="utf-8")
    refused = _run([TETHER, "init"], tmp_path, env)
    assert refused.returncode == 2
    assert refused.stderr.count("\n") == 1 and "never overwrites" in refused.stderr
    assert (tmp_path / "tether.toml").read_text(encoding="utf-8") == "# mine\n"


def test_tether_init_writes_what_it_found(tmp_path: Path) -> None:
    env = _fresh_env(tmp_path)
    agents = tmp_path / "agents"
    agents.mkdir()
    for name in ("claude", "codex"):
        exe = agents / name
        exe.write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
        exe.chmod(0o755)
    env["PATH"] = os.pathsep.join([str(agents), env["PATH"]])
    project = tmp_path / "p"
    (project / "docs" / "adr").mkdir(parents=True)
    (project / "AGENTS.md").write_text("# Conventions\n", encoding="utf-8")
    (project / "tickets").mkdir()
    made = _run([TETHER, "init"], project, env)
    assert made.returncode == 0, made.stderr
    text = (project / "tether.toml").read_text(encoding="utf-8")
    assert '[profiles.claude-code]\nharness = "claude-code"\ndefault = true\n' in text
    assert '[profiles.codex]\nharness = "codex"\n' in text
    assert "# [profiles.vibe]   # not on PATH" in text
    assert "#   decisions.ledger: found docs/adr/" in text
    assert "#   memory.curated: found AGENTS.md" in text
    assert "# the board: found tickets/ (0 tickets)" in text
    shown = _run([TETHER, "config", "show", "--json"], project, env)
    assert shown.returncode == 0, shown.stderr  # what it wrote is a valid configuration


def test_each_built_in_source_reads_its_place(project: Project) -> None:
    project.write_config(base=NO_SOURCES_TOML)
    root = project.root
    ticket = project.add(
        "Port the parser", State.BLOCKED, "dependency", blocked_by="a choice", check=["false"]
    )
    (root / "docs" / "adr").mkdir(parents=True)
    (root / "docs" / "adr" / "0007-parser.md").write_text(
        f"# 7. The parser\n\nWe keep the old tokenizer; {ticket.id} may go ahead.\n",
        encoding="utf-8",
    )
    loop = project.open()
    first = tick(loop)
    assert first.signal is Signal.CONTINUE, first.lines()
    assert first.level2 is not None
    assert [r.status for r in first.level2.reports][:1] == ["found"]
    (note,) = loop.board.load().untriaged()
    assert f"Decision on {ticket.id}" in note.read_text(encoding="utf-8")
    note.unlink()

    (root / "AGENTS.md").write_text(
        "# How we work\n\n- run the tests before a commit\n\n"
        "```\n- [ ] not an item: inside a fence\n```\n"
        "- [ ] port the changelog script\n- [x] done already\nRESUME: finish the docs page\n",
        encoding="utf-8",
    )
    found = tick(project.open())
    assert found.level2 is not None
    curated = next(r for r in found.level2.reports if r.role == "memory.curated")
    assert curated.status == "found", found.lines()
    assert sorted(i.text for i in curated.found) == [
        "finish the docs page",
        "port the changelog script",
    ]


def test_the_person_patterns_live_in_the_decision_folder(project: Project) -> None:
    project.write_config(base=NO_SOURCES_TOML)
    model = project.root / "decisions" / "user-model"
    model.mkdir(parents=True)
    (model / "patterns.md").write_text(
        "# Standing decisions\n\n- 🟢 keep the changelog tidy without asking\n"
        "- 🔴 maybe rename the package\n",
        encoding="utf-8",
    )
    result = tick(project.open())
    assert result.level2 is not None
    report = next(r for r in result.level2.reports if r.role == "user.model")
    assert report.status == "found"
    assert [i.text for i in report.found] == ["🟢 keep the changelog tidy without asking"]
    assert any("maybe rename the package" in u for u in report.user_items)
