"""Put tether's skills where each harness loads them, and take only tether's own out again.

Where each harness looks was read from the installed CLIs (see
docs/how-to/use-tether-from-your-agent.md):

- Claude Code: ``.claude/skills/`` in the project, ``$CLAUDE_CONFIG_DIR/skills``
  (``~/.claude/skills``) for the user;
- Codex: ``.agents/skills/`` from the working folder up to the repository root,
  ``$CODEX_HOME/skills`` (``~/.codex/skills``) and ``~/.agents/skills``;
- Copilot CLI: ``.github/skills/``, ``.agents/skills/`` and ``.claude/skills/``;
  ``$COPILOT_HOME/skills`` (``~/.copilot/skills``) and ``~/.agents/skills``;
  a name found twice is taken once;
- Pi: ``.pi/skills/`` and ``.agents/skills/`` (up to the repository root);
  ``$PI_CODING_AGENT_DIR/skills`` (``~/.pi/agent/skills``) and ``~/.agents/skills``;
  a name found twice is reported as a collision;
- Mistral Vibe: ``.vibe/skills/`` and ``.agents/skills/`` in a trusted project
  folder; ``$VIBE_HOME/skills`` (``~/.vibe/skills``) and ``~/.agents/skills``.

Every skill folder tether writes holds a marker file (``MARKER``) with the
SHA-256 of each file it wrote. A folder without the marker, or whose files no
longer match it, is not tether's: it is never overwritten or removed.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path

from tether import __version__
from tether.core.errors import TetherError
from tether.core.exit_codes import ExitCode
from tether.fs import atomic_write_bytes, atomic_write_json
from tether.harness_registry import BUILTIN

# the agent CLIs tether knows (the scripted harness is tether's own fake, with no skills)
HARNESSES = tuple(name for name in BUILTIN if name != "scripted")
SCOPES = ("project", "user")
MARKER = ".tether-skill.json"
WRITER = "tether skills install"

# actions of a plan
CREATE = "create"
UPDATE = "update"
UNCHANGED = "unchanged"
REMOVE = "remove"
ABSENT = "absent"
REFUSE = "refuse"
COVERED = "covered"
# a copy that stays for the other harnesses that load it: only its marker changes
KEEP = "keep"


class SkillsRefusedError(TetherError):
    """A skill folder that tether did not write (or that was changed since) is in the way."""

    exit_code = ExitCode.HUMAN_STOP


@dataclass(frozen=True)
class Skill:
    name: str
    # path inside the skill folder (posix) -> content
    files: Mapping[str, bytes]


@dataclass(frozen=True)
class SkillAction:
    harness: str
    skill: str
    folder: Path
    action: str
    reason: str = ""
    # the harnesses the copy serves afterwards (recorded in its marker)
    users: tuple[str, ...] = ()

    def line(self) -> str:
        tail = f" ({self.reason})" if self.reason else ""
        return f"{self.action:<9} {self.folder}{tail}"


@dataclass
class SkillPlan:
    install: bool
    actions: list[SkillAction] = field(default_factory=list)
    skills: dict[str, Skill] = field(default_factory=dict)

    @property
    def refused(self) -> list[SkillAction]:
        return [a for a in self.actions if a.action == REFUSE]

    @property
    def changes(self) -> list[SkillAction]:
        return [a for a in self.actions if a.action in (CREATE, UPDATE, REMOVE, KEEP)]


def _walk(node: Traversable, prefix: str = "") -> Iterable[tuple[str, bytes]]:
    for child in sorted(node.iterdir(), key=lambda c: c.name):
        if child.name.startswith(".") or child.name == "__pycache__":
            continue
        rel = f"{prefix}{child.name}"
        if child.is_dir():
            yield from _walk(child, rel + "/")
        elif not child.name.endswith(".py"):
            yield rel, child.read_bytes()


def shipped_skills() -> list[Skill]:
    """The skills in the installed package, by name."""
    root = files("tether") / "skills"
    skills = []
    for child in sorted(root.iterdir(), key=lambda c: c.name):
        if child.is_dir() and (child / "SKILL.md").is_file():
            skills.append(Skill(child.name, dict(_walk(child))))
    return skills


def _home(env: Mapping[str, str]) -> Path:
    home = env.get("HOME")
    return Path(home) if home else Path.home()


def _config_base(env: Mapping[str, str], variable: str, default: str) -> Path:
    value = env.get(variable)
    return Path(value) if value else _home(env) / default


def skills_dirs(
    harness: str, scope: str, project_dir: Path, env: Mapping[str, str] | None = None
) -> list[Path]:
    """Every folder ``harness`` loads skills from at ``scope``; tether writes to the first."""
    env = os.environ if env is None else env
    if harness not in HARNESSES:
        raise SkillsUsageError(f"unknown harness {harness!r}; known: {', '.join(HARNESSES)}")
    if scope not in SCOPES:
        raise SkillsUsageError(f"unknown scope {scope!r}; use project or user")
    agents_user = _home(env) / ".agents" / "skills"
    if scope == "project":
        project = {
            "claude-code": [".claude/skills"],
            "codex": [".agents/skills"],
            "copilot": [".github/skills", ".agents/skills", ".claude/skills"],
            "pi": [".pi/skills", ".agents/skills"],
            "vibe": [".vibe/skills", ".agents/skills"],
        }[harness]
        return [project_dir / p for p in project]
    if harness == "claude-code":
        return [_config_base(env, "CLAUDE_CONFIG_DIR", ".claude") / "skills"]
    if harness == "codex":
        return [_config_base(env, "CODEX_HOME", ".codex") / "skills", agents_user]
    if harness == "copilot":
        return [_config_base(env, "COPILOT_HOME", ".copilot") / "skills", agents_user]
    if harness == "pi":
        return [_config_base(env, "PI_CODING_AGENT_DIR", ".pi/agent") / "skills", agents_user]
    return [_config_base(env, "VIBE_HOME", ".vibe") / "skills", agents_user]


class SkillsUsageError(TetherError):
    exit_code = ExitCode.USAGE


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _marker(folder: Path) -> dict[str, object] | None:
    try:
        data = json.loads((folder / MARKER).read_text("utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("written_by") != WRITER:
        return None
    return data


def marker_users(folder: Path) -> tuple[str, ...] | None:
    """The harnesses a copy of tether's serves, by its marker; None when the marker does not
    say (a copy an older tether wrote)."""
    data = _marker(folder)
    found = None if data is None else data.get("harnesses")
    if not isinstance(found, list) or not all(isinstance(h, str) for h in found):
        return None
    return tuple(found)


def _read_marker(folder: Path) -> dict[str, str] | None:
    """The files tether wrote into ``folder`` (path -> sha256), None when it is not tether's."""
    data = _marker(folder)
    if data is None:
        return None
    found = data.get("files")
    if not isinstance(found, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in found.items()
    ):
        return None
    return dict(found)


def _on_disk(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` but the marker: path -> sha256."""
    result: dict[str, str] = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file() or path.is_symlink():
            rel = path.relative_to(folder).as_posix()
            if rel != MARKER:
                result[rel] = _digest(path.read_bytes()) if path.is_file() else "symlink"
    return result


def ownership(folder: Path) -> tuple[bool, str]:
    """Whether ``folder`` is tether's untouched copy, and why not."""
    if folder.is_symlink() or not folder.is_dir():
        return False, "not a folder tether wrote"
    marker = _read_marker(folder)
    if marker is None:
        return False, f"no {MARKER}: tether did not write it"
    if _on_disk(folder) != marker:
        return False, "changed since tether wrote it"
    return True, ""


def current(skill: Skill, folder: Path) -> bool:
    """Whether ``folder`` holds exactly this skill's files."""
    return _on_disk(folder) == {rel: _digest(data) for rel, data in skill.files.items()}


def install_action(
    harness: str, skill: Skill, folder: Path, users: tuple[str, ...] = ()
) -> SkillAction:
    if not folder.exists() and not folder.is_symlink():
        return SkillAction(harness, skill.name, folder, CREATE, users=users)
    ours, why = ownership(folder)
    if not ours:
        return SkillAction(harness, skill.name, folder, REFUSE, why)
    if current(skill, folder):
        if marker_users(folder) != users:
            return SkillAction(harness, skill.name, folder, KEEP, "records who loads it", users)
        return SkillAction(harness, skill.name, folder, UNCHANGED, users=users)
    return SkillAction(harness, skill.name, folder, UPDATE, users=users)


def _write_marker(folder: Path, files: Mapping[str, str], users: tuple[str, ...]) -> None:
    marker = {
        "written_by": WRITER,
        "version": __version__,
        "files": dict(files),
        # the harnesses this copy serves: uninstalling one of them removes the copy only
        # when no other is left
        "harnesses": sorted(users),
    }
    atomic_write_json(folder / MARKER, marker)


def _write(skill: Skill, folder: Path, users: tuple[str, ...]) -> None:
    if folder.exists():
        shutil.rmtree(folder)
    for rel, data in skill.files.items():
        atomic_write_bytes(folder / rel, data)
    _write_marker(folder, {rel: _digest(data) for rel, data in skill.files.items()}, users)


def apply_plan(plan: SkillPlan) -> None:
    """Carry out ``plan``; refuses as a whole, before any write, when an action is refused."""
    if plan.refused:
        first = plan.refused[0]
        raise SkillsRefusedError(
            f"refused: {first.folder} is in the way ({first.reason}); tether neither "
            f"overwrites nor removes it. Move it away or rename it, then run again."
            + (f" ({len(plan.refused) - 1} more refused)" if len(plan.refused) > 1 else "")
        )
    for action in plan.changes:
        if action.action == REMOVE:
            shutil.rmtree(action.folder)
        elif action.action == KEEP:
            _write_marker(action.folder, _on_disk(action.folder), action.users)
        else:
            _write(plan.skills[action.skill], action.folder, action.users)
