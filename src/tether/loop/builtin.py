"""The built-in level-2 sources: one per role, found in every project (``kind = "builtin"``).

A project that configures nothing still has all four roles answerable, so a
fresh project with nothing to do can prove it (``STOP (exhausted)``). Each
built-in source knows where its place is in any project; when that place does
not exist yet, nothing was recorded there, and the source answers ``empty``
saying so (a folder the *configuration* names and that is missing stays
``unavailable``: that is a ``files`` source).

- ``decisions.ledger``: the project's decision folder, the first of
  ``decisions/``, ``docs/decisions/``, ``docs/adr/`` that exists; read as a
  ``files`` source (a decision naming an open ticket is work, ``TO-DECIDE-USER*``
  lines go to the person).
- ``memory.organic``: the notes the agents keep for themselves — Claude Code's
  automatic memory of this project (``~/.claude/projects/<project>/memory/``)
  and the local memory files (``CLAUDE.local.md``, ``AGENTS.override.md``).
- ``memory.curated``: the memory files people curate for the agents:
  ``AGENTS.md``, ``CLAUDE.md``, ``.claude/CLAUDE.md``, ``GEMINI.md``,
  ``.github/copilot-instructions.md``.
- ``user.model``: what the person decided before as standing patterns, in the
  decision folder's ``user-model/`` folder (read as a ``files`` source of this
  role: only lines with a confidence are patterns).

In the memory files only open task items are work: ``- [ ] …`` lines and
``RESUME: …`` lines (what an earlier session left unfinished); everything else
in them is knowledge for the agents, read but never turned into tickets.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from tether.loop.sources import FileSource, Item, Location, Reading, Source, item_from
from tether.loop.todo import OPEN_ITEM

DECISION_FOLDERS = ("decisions", "docs/decisions", "docs/adr")
USER_MODEL_FOLDER = "user-model"
CURATED_MEMORY_FILES = (
    "AGENTS.md",
    "CLAUDE.md",
    ".claude/CLAUDE.md",
    "GEMINI.md",
    ".github/copilot-instructions.md",
)
ORGANIC_MEMORY_FILES = ("CLAUDE.local.md", "AGENTS.override.md")
_RESUME = re.compile(r"^\s*(?:[-*+]\s+)?RESUME:\s*(?P<text>\S.*?)\s*$")


def decision_folder(project_root: Path) -> Path | None:
    """The project's decision folder: the first of ``DECISION_FOLDERS`` that exists."""
    for name in DECISION_FOLDERS:
        folder = project_root / name
        if folder.is_dir():
            return folder
    return None


def _shown(path: Path, project_root: Path) -> str:
    try:
        return str(path.relative_to(project_root))
    except ValueError:
        return str(path)


class BuiltinFolder:
    """A folder read like a ``files`` source; a folder not made yet is an empty record."""

    kind = "builtin"

    def __init__(self, role: str, project_root: Path, subfolder: str | None = None) -> None:
        self.role = role
        self.project_root = project_root
        self.subfolder = subfolder

    def _folder(self) -> Path | None:
        base = decision_folder(self.project_root)
        if base is None:
            return None
        folder = base / self.subfolder if self.subfolder else base
        return folder if folder.is_dir() else None

    def _absent(self) -> str:
        """Where the folder would be, and what its absence means."""
        base = decision_folder(self.project_root)
        folders = ", ".join(f"{n}/" for n in DECISION_FOLDERS)
        if base is None:
            missing = f"no decision folder ({folders})"
            return f"{missing}: nothing {'recorded' if self.subfolder else 'decided'} yet"
        return f"no {_shown(base, self.project_root)}/{self.subfolder}/: no pattern recorded yet"

    def _inner(self, folder: Path) -> FileSource:
        return FileSource(self.role, folder, _shown(folder, self.project_root))

    def locate(self) -> Location:
        folder = self._folder()
        if folder is None:
            return Location(True, self._absent(), situation="absent")
        return self._inner(folder).locate()

    def read(self, location: Location) -> Reading:
        folder = self._folder()
        if folder is None:
            return Reading(ok=True, note=self._absent())
        return self._inner(folder).read(location)


class MemoryFiles:
    """Agents' memory files; only their open task items (``- [ ]``, ``RESUME:``) are items."""

    kind = "builtin"

    def __init__(
        self, role: str, project_root: Path, files: Sequence[Path], folders: Sequence[Path] = ()
    ) -> None:
        self.role = role
        self.project_root = project_root
        self.files = tuple(files)
        self.folders = tuple(folders)

    def _present(self) -> list[Path]:
        found = [p for p in self.files if p.is_file()]
        for folder in self.folders:
            if folder.is_dir():
                found += sorted(p for p in folder.glob("*.md") if p.is_file())
        return found

    def _display(self) -> str:
        return ", ".join(_shown(p, self.project_root) for p in [*self.files, *self.folders])

    def locate(self) -> Location:
        try:
            stamps = [f"{p}:{p.stat().st_mtime_ns}:{p.stat().st_size}" for p in self._present()]
        except OSError as exc:
            return Location(False, self._display(), f"cannot look at a memory file: {exc}")
        return Location(True, self._display(), situation="|".join(stamps) or "absent")

    def read(self, location: Location) -> Reading:
        reading = Reading(ok=True)
        present = self._present()
        for path in present:
            shown = _shown(path, self.project_root)
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError as exc:
                return Reading(ok=False, error=f"cannot read {shown}: {exc.strerror}")
            reading.read.append(shown)
            reading.items += open_task_items(text, shown)
        if not present:
            reading.note = f"none of {self._display()} exists: nothing recorded yet"
        return reading


def open_task_items(text: str, origin: str) -> list[Item]:
    """The open ``- [ ]`` items and ``RESUME:`` lines of a memory file (fences skipped)."""
    items: list[Item] = []
    in_fence = False
    for line in text.splitlines():
        if line.strip().startswith("```"):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        match = OPEN_ITEM.match(line) or _RESUME.match(line)
        if match is not None and (item := item_from(match["text"], origin)) is not None:
            items.append(item)
    return items


def claude_project_memory(project_root: Path, env: Mapping[str, str]) -> Path | None:
    """Claude Code's automatic memory folder of this project, where it would be."""
    config = env.get("CLAUDE_CONFIG_DIR")
    home = env.get("HOME")
    base = Path(config) if config else (Path(home) / ".claude" if home else None)
    if base is None:
        return None
    name = re.sub(r"[^A-Za-z0-9]", "-", str(project_root))
    return base / "projects" / name / "memory"


def builtin_source(role: str, project_root: Path, env: Mapping[str, str]) -> Source:
    """The built-in source of ``role``."""
    if role == "decisions.ledger":
        return BuiltinFolder(role, project_root)
    if role == "user.model":
        return BuiltinFolder(role, project_root, USER_MODEL_FOLDER)
    if role == "memory.curated":
        return MemoryFiles(role, project_root, [project_root / n for n in CURATED_MEMORY_FILES])
    auto = claude_project_memory(project_root, env)
    return MemoryFiles(
        role,
        project_root,
        [project_root / n for n in ORGANIC_MEMORY_FILES],
        [auto] if auto is not None else [],
    )
