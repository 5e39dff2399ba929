"""``tether init``: a commented ``tether.toml`` that says what was found on this machine.

It looks, and writes down what it saw: the agent CLIs on PATH (each becomes a
profile; the first is the default), the board (an existing ``tickets/``
folder, task files of beads or Backlog.md to import), the TODO file, and per
level-2 role what its built-in source finds in this project. Nothing is
guessed: what was not found is written as a comment. An existing
``tether.toml`` is never overwritten.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from tether.core.errors import TetherError
from tether.core.exit_codes import ExitCode
from tether.core.project import CONFIG_FILE
from tether.fs import create_exclusive
from tether.harness_registry import BUILTIN
from tether.loop.builtin import (
    CURATED_MEMORY_FILES,
    DECISION_FOLDERS,
    ORGANIC_MEMORY_FILES,
    USER_MODEL_FOLDER,
    claude_project_memory,
    decision_folder,
)

BOARD = "tickets"
TODO_FILE = "TODO.md"
# task files of other tools that `tether board import` reads
_IMPORTABLE = {"beads": ".beads/issues.jsonl", "backlog": "backlog/tasks"}


class ConfigExistsError(TetherError):
    """``tether init`` found a ``tether.toml`` already: it is never overwritten (exit 2)."""

    exit_code = ExitCode.USAGE


@dataclass
class Found:
    """What ``tether init`` saw in the project and on PATH."""

    root: Path
    harnesses: dict[str, str] = field(default_factory=dict)  # harness -> executable path
    missing: list[str] = field(default_factory=list)  # harnesses not on PATH
    board: Path | None = None
    tickets: int = 0
    importable: dict[str, str] = field(default_factory=dict)  # format -> path
    todo: bool = False
    sources: dict[str, str] = field(default_factory=dict)  # role -> what its source finds


def look(root: Path, env: Mapping[str, str]) -> Found:
    """What is there: agent CLIs on the PATH of ``env``, the board, the sources."""
    from tether.harnesses import get_harness

    found = Found(root)
    path = env.get("PATH", os.defpath)
    for name in BUILTIN:
        if name == "scripted":
            continue
        exe = shutil.which(get_harness(name).executable, path=path)
        if exe:
            found.harnesses[name] = exe
        else:
            found.missing.append(name)
    board = root / BOARD
    if board.is_dir():
        found.board = board
        found.tickets = sum(1 for _ in board.rglob("T-*.md"))
    found.importable = {f: p for f, p in _IMPORTABLE.items() if (root / p).exists()}
    found.todo = (root / TODO_FILE).is_file()
    found.sources = _sources(root, env)
    return found


def _sources(root: Path, env: Mapping[str, str]) -> dict[str, str]:
    decisions = decision_folder(root)
    folders = ", ".join(f"{n}/" for n in DECISION_FOLDERS)
    model = decisions / USER_MODEL_FOLDER if decisions is not None else None
    curated = [n for n in CURATED_MEMORY_FILES if (root / n).is_file()]
    organic = [n for n in ORGANIC_MEMORY_FILES if (root / n).is_file()]
    auto = claude_project_memory(root, env)
    if auto is not None and auto.is_dir():
        organic.append(str(auto))
    return {
        "decisions.ledger": (
            f"found {decisions.relative_to(root)}/"
            if decisions is not None
            else f"none of {folders} yet (empty until one is made)"
        ),
        "memory.organic": (
            "found " + ", ".join(organic)
            if organic
            else "no CLAUDE.local.md, AGENTS.override.md or Claude Code memory of this project yet"
        ),
        "memory.curated": (
            "found " + ", ".join(curated) if curated else "no AGENTS.md, CLAUDE.md, ... yet"
        ),
        "user.model": (
            f"found {model.relative_to(root)}/"
            if model is not None and model.is_dir()
            else f"no {USER_MODEL_FOLDER}/ in the decision folder yet"
        ),
    }


def render(found: Found, today: date | None = None) -> str:
    """The commented ``tether.toml`` for what was found."""
    day = (today or date.today()).isoformat()
    out = [
        f"# tether.toml, written by `tether init` on {day} from what it found here.",
        "# Every key is optional; docs/reference/config.md lists them all.",
        "",
    ]
    out += _profiles(found)
    out += _loop(found)
    return "\n".join(out).rstrip() + "\n"


def _profiles(found: Found) -> list[str]:
    out: list[str] = []
    if found.harnesses:
        out.append("# Agent CLIs found on PATH, one profile each (the default one runs")
        out.append("# `tether run` and the loop's units):")
        out += [f"#   {h}: {p}" for h, p in found.harnesses.items()]
        for number, (name, _) in enumerate(found.harnesses.items()):
            out += ["", f"[profiles.{name}]", f'harness = "{name}"']
            if number == 0:
                out.append("default = true")
            out.append('# model = "..."          # the CLI\'s own default when not set')
            out.append("# iteration_limit = 20   # budgets: see docs/how-to/run-with-a-budget.md")
    else:
        out += [
            "# No agent CLI found on PATH (claude, codex, copilot, pi, vibe). Until a",
            "# profile is configured, a tick that would run an agent refuses (exit 3);",
            "# a tick with nothing to run still stops with its evidence.",
        ]
    for name in found.missing:
        out += ["", f"# [profiles.{name}]   # not on PATH", f'# harness = "{name}"']
    return [*out, ""]


def _loop(found: Found) -> list[str]:
    out = ["[loop]"]
    if found.board is not None:
        out.append(f"# the board: found {BOARD}/ ({found.tickets} tickets)")
    else:
        out.append(f"# the board: no {BOARD}/ yet; `tether board init` makes it")
    for fmt, path in found.importable.items():
        out.append(f"# found {path}: `tether board import --from {fmt} {path}` brings it in")
    out.append(f'board = "{BOARD}"')
    if found.todo:
        out.append(f'todo_files = ["{TODO_FILE}"]   # found {TODO_FILE}')
    else:
        out.append(f'# todo_files = ["{TODO_FILE}"]   # no {TODO_FILE} yet (read when it exists)')
    out += [
        "",
        "# Level 2 asks four sources before the loop may say `exhausted`. Each role",
        '# has a built-in source every project has (kind = "builtin"); here they find:',
    ]
    out += [f"#   {role}: {what}" for role, what in found.sources.items()]
    out += [
        "# To ask your own tools instead, give the role a files or command source, e.g.",
        '# [loop.sources."memory.curated"]',
        '# kind = "command"',
        '# command = ["my-memory", "open-items", "--json"]',
    ]
    return out


def write(root: Path, env: Mapping[str, str], today: date | None = None) -> tuple[Path, Found]:
    """Write ``root/tether.toml``; ``ConfigExistsError`` when one is there already."""
    target = root / CONFIG_FILE
    if target.exists():
        raise ConfigExistsError(
            f"{target} exists already; tether init never overwrites it "
            f"(edit it, or move it away and run tether init again)"
        )
    found = look(root, env)
    if not create_exclusive(target, render(found, today).encode("utf-8")):
        raise ConfigExistsError(f"{target} appeared while tether init was writing it; kept it")
    return target, found
