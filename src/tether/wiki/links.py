"""Resolving a link path to a file, the way Obsidian does.

Matching is case-insensitive; ``.md`` may be written or left out. In order:

1. a path from the page-folder root (``Folder/Note``),
2. a path relative to the linking page's folder (``./Note``, ``../Other/Note``),
3. the file name (``Note`` finds ``Any/Folder/Note.md``; an attachment is named
   with its extension, ``image.png``),
4. an alias from a page's front matter (``aliases:``),
5. a path suffix (``Folder/Note`` finds ``Deeper/Folder/Note.md``).

When several files share a name, the one in the linking page's folder wins,
then the shortest path, then the first in sorted order. A path that climbs out
of the root never resolves.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable
from dataclasses import dataclass

HOW_PATH = "path"
HOW_RELATIVE = "relative"
HOW_NAME = "name"
HOW_ALIAS = "alias"
HOW_SUFFIX = "suffix"
HOW_SELF = "self"


@dataclass(frozen=True)
class Resolution:
    path: str  # the file's path relative to the page folder
    how: str


def _key(path: str) -> str:
    """Lower-case path, ``.md`` left off (a page is reached with or without it)."""
    low = path.lower()
    return low[:-3] if low.endswith(".md") else low


class Resolver:
    """Link resolution over a set of files (pages and attachments) and page aliases."""

    def __init__(self, files: Iterable[str], aliases: Iterable[tuple[str, str]] = ()) -> None:
        self._by_path: dict[str, str] = {}
        self._by_name: dict[str, list[str]] = {}
        self._by_alias: dict[str, list[str]] = {}
        for path in files:
            key = _key(path)
            self._by_path.setdefault(key, path)
            name = key.rsplit("/", 1)[-1]
            self._by_name.setdefault(name, []).append(path)
        for path, alias in aliases:
            self._by_alias.setdefault(_key(alias.strip()), []).append(path)
        self._paths = sorted(self._by_path.values())

    def __contains__(self, path: str) -> bool:
        return _key(path) in self._by_path

    def resolve(self, target: str, source: str | None = None) -> Resolution | None:
        """The file ``target`` (as written in a link on page ``source``) points at."""
        target = target.strip().replace("\\", "/")
        if not target:
            return Resolution(source, HOW_SELF) if source is not None else None
        folder = posixpath.dirname(source) if source else ""
        key = _key(target.lstrip("/"))
        if "/" in target and not target.startswith(("./", "../")):
            found = self._by_path.get(key)
            if found is not None:
                return Resolution(found, HOW_PATH)
        relative = posixpath.normpath(posixpath.join(folder, target)) if folder else target
        if target.startswith(("./", "../")) or (folder and "/" in target):
            if not relative.startswith("../") and relative != "..":
                found = self._by_path.get(_key(relative))
                if found is not None:
                    return Resolution(found, HOW_RELATIVE)
            if target.startswith(("./", "../")):
                return None
        if "/" not in key:
            found = self._pick(self._by_name.get(key), folder)
            if found is not None:
                return Resolution(found, HOW_NAME)
        found = self._pick(self._by_alias.get(key), folder)
        if found is not None:
            return Resolution(found, HOW_ALIAS)
        if "/" in key:
            tail = "/" + key
            matches = [p for p in self._paths if _key(p).endswith(tail)]
            found = self._pick(matches, folder)
            if found is not None:
                return Resolution(found, HOW_SUFFIX)
        return None

    @staticmethod
    def _pick(candidates: list[str] | None, folder: str) -> str | None:
        if not candidates:
            return None
        if len(candidates) == 1:
            return candidates[0]
        same = [p for p in candidates if posixpath.dirname(p) == folder]
        pool = same or candidates
        return min(pool, key=lambda p: (p.count("/"), len(p), p))
