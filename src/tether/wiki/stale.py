"""The stale list: ``wiki/stale.json`` names pages whose content may be out of date.

Accepted shapes (all read the same way)::

    {"stale": [{"page": "concepts/x", "reason": "source changed", "since": "2026-01-02"}]}
    [{"page": "x", "reason": "..."}]
    ["x", "concepts/y"]
    {"x": "reason", "concepts/y": "reason"}

An entry names a page by id, by path relative to the page folder or to the
wiki root (``concepts/x``, ``wiki/concepts/x.md``; ``.md`` optional), or by any
link text that resolves to it (``id`` and ``target`` are read like ``page``).
``stale_pages`` resolves the entries with ``Index.find``, the one resolver that
``room brief``, ``wiki stale`` and ``wiki check`` share.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tether.core.errors import UsageError

if TYPE_CHECKING:
    from tether.wiki.index import Index
    from tether.wiki.index_schema import PageRow


@dataclass(frozen=True)
class StaleEntry:
    page: str  # as written in the file
    reason: str
    since: str | None = None


def load_stale(path: Path) -> list[StaleEntry]:
    """The entries of a stale file; none when it does not exist."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise UsageError(f"cannot read the stale list {path}: {exc.strerror}") from exc
    if not text.strip():
        return []
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(
            f"{path}:{exc.lineno}: the stale list is not valid JSON ({exc.msg}); fix the file."
        ) from exc
    return parse_stale(data, path)


def parse_stale(data: Any, path: Path | None = None) -> list[StaleEntry]:
    where = f"{path}: " if path is not None else ""
    if isinstance(data, dict) and "stale" in data and isinstance(data["stale"], list):
        data = data["stale"]
    entries: list[StaleEntry] = []
    if isinstance(data, dict):
        for page, reason in data.items():
            entries.append(StaleEntry(str(page), str(reason or "")))
        return entries
    if not isinstance(data, list):
        raise UsageError(f"{where}the stale list must be a list or an object of pages")
    for item in data:
        if isinstance(item, str):
            entries.append(StaleEntry(item, ""))
        elif isinstance(item, dict):
            page = item.get("page") or item.get("id") or item.get("target") or item.get("path")
            if not page:
                raise UsageError(f"{where}stale entry {item!r} names no page (`page`)")
            since = item.get("since") or item.get("date")
            entries.append(
                StaleEntry(str(page), str(item.get("reason") or ""), str(since) if since else None)
            )
        else:
            raise UsageError(f"{where}stale entry {item!r} is neither a page name nor an object")
    return entries


def stale_pages(index: Index) -> list[tuple[StaleEntry, PageRow | None]]:
    """Each entry of the wiki's stale list with the page it names (None: no such page)."""
    entries = load_stale(index.wiki.stale_path)
    found = index.find_many(entry.page for entry in entries)
    return [(entry, found[entry.page]) for entry in entries]


# (index file, index generation) -> (the stale file's change key, its reasons); a few kept
_REASONS: dict[tuple[str, int], tuple[bytes, dict[str, str]]] = {}
_REASONS_KEPT = 8


def stale_reasons(index: Index) -> dict[str, str]:
    """Page path (relative to the page folder) -> why it is stale, for the pages listed.

    The answer depends only on the stale file and the index, so it is kept for the
    next call (every brief asks) while both are unchanged: the index by its
    generation (any write moves it), the file by its change key — modification
    and change time, size, inode, taken before it is read. A file changed less
    than ``RACY_NS`` before is read again every time, as the index does with pages.
    """
    import time

    from tether.wiki.index_store import RACY_NS, generation
    from tether.wiki.scan import ctime_of, key_of

    path = index.wiki.stale_path
    now = time.time_ns()
    try:
        key: bytes | None = key_of(path.stat())
    except OSError:
        key = None
    memo = (str(index.path), generation(index.conn))
    kept = _REASONS.get(memo)
    if key is not None and kept is not None and kept[0] == key:
        return dict(kept[1])
    reasons = _reasons(index)
    if key is not None and ctime_of(key) < now - RACY_NS:
        while len(_REASONS) >= _REASONS_KEPT:
            _REASONS.pop(next(iter(_REASONS)))
        _REASONS[memo] = (key, dict(reasons))
    return reasons


def _reasons(index: Index) -> dict[str, str]:
    entries = load_stale(index.wiki.stale_path)
    paths = index.find_paths(entry.page for entry in entries)
    out: dict[str, str] = {}
    for entry in entries:
        path = paths[entry.page]
        if path is not None:
            out.setdefault(path, entry.reason or "listed in stale.json")
    return out
