"""Where a wiki's parts live, and which page ids its files get.

Two shapes are read. A tether wiki is a folder with ``wiki/`` (pages in
``wiki/<kind>/<id>.md``, ``wiki/index.md``, ``wiki/stale.json``), ``raw/``
(captured sources), ``incoming/`` and ``quarantine/``. Any other folder of
Markdown files (an Obsidian vault) is read as pages from its top. Link paths
resolve from the page folder, as Obsidian resolves them from the vault root.
Which files of the page folder count (hidden ones, symlinks, the reserved
folders) is decided by ``tether.wiki.scan``.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from pathlib import Path

from tether.core.errors import UsageError
from tether.fs import resolve_inside

PAGES_DIR = "wiki"
RAW_DIR = "raw"
INCOMING_DIR = "incoming"
QUARANTINE_DIR = "quarantine"
STALE_FILE = "stale.json"
INDEX_PAGE = "index.md"
# Folders of the queue and the sources: never pages, even in a wiki without wiki/.
RESERVED = frozenset({RAW_DIR, INCOMING_DIR, QUARANTINE_DIR})


@dataclass(frozen=True)
class Wiki:
    root: Path  # the folder the user named, resolved
    pages_dir: Path  # root/wiki for a tether wiki, else root

    @classmethod
    def open(cls, root: str | Path) -> Wiki:
        given = Path(root).expanduser()
        real = given.resolve()
        if not real.is_dir():
            raise UsageError(f"wiki root {str(given)!r} is not a folder; give the wiki's folder.")
        pages = real / PAGES_DIR
        return cls(real, pages if pages.is_dir() else real)

    @property
    def tether_layout(self) -> bool:
        return self.pages_dir != self.root

    @property
    def raw_dir(self) -> Path:
        return self.root / RAW_DIR

    @property
    def incoming_dir(self) -> Path:
        return self.root / INCOMING_DIR

    @property
    def quarantine_dir(self) -> Path:
        return self.root / QUARANTINE_DIR

    @property
    def stale_path(self) -> Path:
        return self.pages_dir / STALE_FILE

    @property
    def index_page(self) -> str:
        return INDEX_PAGE

    @property
    def prefix(self) -> str:
        """The page folder relative to the root ("" or "wiki/")."""
        return f"{PAGES_DIR}/" if self.tether_layout else ""

    def root_relative(self, page_path: str) -> str:
        """A page-folder path as a path relative to the wiki root."""
        return self.prefix + page_path

    def page_file(self, page_path: str) -> Path:
        """The file of an indexed page path, held inside the page folder."""
        return resolve_inside(self.pages_dir, page_path)


def clean_page_name(name: str) -> str:
    """A page name as a stale list, a command or a citation writes it, without decoration.

    ``[[Page|text]]`` and ``[[Page#Heading]]`` name ``Page``; ``\\`` counts as ``/``.
    """
    text = name.strip()
    if text.startswith("[[") and text.endswith("]]"):
        text = text[2:-2].split("|", 1)[0].split("#", 1)[0]
    return text.strip().replace("\\", "/")


def page_path_forms(name: str, prefix: str) -> list[str]:
    """The paths (relative to the page folder) a page name may be written as.

    The name as written, and, when it starts with the page folder's name
    (``prefix``: ``"wiki/"`` in a tether wiki), the rest: ``wiki/concepts/x.md``
    is the path relative to the wiki root of ``concepts/x.md``. ``./`` and
    repeated slashes are dropped. A name that is absolute or climbs out of the
    page folder (``..``) has no path form at all.
    """
    text = clean_page_name(name)
    if not text or text.startswith("/") or "\0" in text:
        return []
    forms: list[str] = []
    for candidate in (text, text[len(prefix) :] if prefix and text.startswith(prefix) else None):
        if not candidate:
            continue
        norm = posixpath.normpath(candidate)
        if norm in (".", "..") or norm.startswith("../") or norm.startswith("/"):
            continue
        if norm not in forms:
            forms.append(norm)
    return forms


_DRIVE = re.compile(r"^[A-Za-z]:")


def unsafe_id(declared: str) -> str | None:
    """Why a declared page id cannot be an id (it reads as a path out of the wiki); None if fine.

    Ids may hold ``/`` (``concepts/x`` is an id tether gives itself), but not a
    leading ``/`` or ``~``, a drive letter, a ``.`` or ``..`` part, an empty part,
    a backslash or a control character.
    """
    if not declared:
        return "it is empty"
    if declared.startswith(("/", "~")) or _DRIVE.match(declared):
        return "it is an absolute path"
    if "\\" in declared:
        return "it holds a backslash"
    if any(ord(c) < 32 or ord(c) == 127 for c in declared):
        return "it holds a control character"
    parts = declared.split("/")
    if any(part in (".", "..") for part in parts):
        return "it climbs folders (`.` or `..`)"
    if any(not part for part in parts):
        return "it has an empty path part"
    return None


def is_page(path: str) -> bool:
    return path.lower().endswith(".md")


def page_stem(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name[:-3] if name.lower().endswith(".md") else name


def assign_ids(pages: list[tuple[str, str | None]]) -> dict[str, str]:
    """Page id per path: the declared ``id``, else the file name, else the path.

    A declared id that reads as a path out of the wiki (``unsafe_id``) is never
    used: such a page is known by its file name (``wiki check`` reports it). A
    file name shared by several pages (case-insensitively) cannot be an id;
    those pages get their path without ``.md``. A declared id used twice is
    kept for the first page (by path) only.
    """
    stems: dict[str, int] = {}
    for path, _ in pages:
        key = page_stem(path).lower()
        stems[key] = stems.get(key, 0) + 1
    ids: dict[str, str] = {}
    taken: set[str] = set()
    for path, declared in sorted(pages):
        if declared and unsafe_id(declared) is None and declared.lower() not in taken:
            ids[path] = declared
        elif stems[page_stem(path).lower()] == 1:
            ids[path] = page_stem(path)
        else:
            ids[path] = path[:-3]
        taken.add(ids[path].lower())
    return ids
