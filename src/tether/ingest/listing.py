"""The ingest queue's folders and what is in them.

Under the wiki root: ``quarantine/<id>/`` (collected, never shown to an
agent), ``incoming/<id>/`` (released, waiting), ``incoming/.claimed/<id>/``
(taken by one run) and ``incoming/.done/<id>/``.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from tether.core.errors import PathEscapeError, UsageError
from tether.fs import resolve_inside
from tether.ingest.entry import CLAIMED, DONE, Entry
from tether.ingest.manifest import MANIFEST, read_manifest, write_manifest
from tether.wiki.layout import Wiki


class QueueFolders:
    """The queue's folders under a wiki, and the entries each holds."""

    def __init__(self, wiki: Wiki) -> None:
        self.wiki = wiki
        self.quarantine = wiki.quarantine_dir
        self.incoming = wiki.incoming_dir
        self.claimed = self.incoming / CLAIMED
        self.done = self.incoming / DONE
        self.raw = wiki.raw_dir

    def _entries(self, folder: Path) -> list[Entry]:
        if not folder.is_dir():
            return []
        out: list[Entry] = []
        for child in folder.iterdir():
            if child.name.startswith(".") or child.is_symlink():
                continue  # hidden work folders; a linked entry would reach outside the queue
            if not (child / MANIFEST).is_file():
                continue
            with contextlib.suppress(UsageError):
                out.append(Entry(child.name, child, read_manifest(child)))
        return out

    def waiting(self, kind: str | None = None) -> list[Entry]:
        """Entries in incoming/, oldest release first."""
        entries = [e for e in self._entries(self.incoming) if kind is None or e.kind == kind]
        return sorted(entries, key=lambda e: (e.manifest.released_at or "", e.id))

    def quarantined(self) -> list[Entry]:
        return sorted(self._entries(self.quarantine), key=lambda e: e.id)

    def claims(self) -> list[Entry]:
        return sorted(self._entries(self.claimed), key=lambda e: e.id)

    def finished(self) -> list[Entry]:
        return sorted(self._entries(self.done), key=lambda e: e.id)

    def loose_files(self) -> list[str]:
        """Names in incoming/ that are no released entry (dropped there by hand)."""
        if not self.incoming.is_dir():
            return []
        return sorted(
            child.name
            for child in self.incoming.iterdir()
            if not child.name.startswith(".") and not (child / MANIFEST).is_file()
        )

    def with_digest(self, digest: str) -> Entry | None:
        """An entry already collected with these contents (in any state)."""
        for entry in (
            *self.quarantined(),
            *self._entries(self.incoming),
            *self.claims(),
            *self.finished(),
        ):
            if entry.manifest.sha256 == digest:
                return entry
        return None

    def child(self, folder: Path, given: str) -> Path:
        """``folder/given`` for an entry name; refuses paths, '..' and links out."""
        if not given or "/" in given or given in (".", "..") or given.startswith("."):
            raise PathEscapeError(given, str(folder))
        real = resolve_inside(folder, given)
        if real.parent != folder.resolve():
            raise PathEscapeError(given, str(folder))
        return real

    def update_manifest(self, entry: Entry, **changes: Any) -> Entry:
        manifest = entry.manifest.changed(**changes)
        write_manifest(entry.folder, manifest)
        return Entry(entry.id, entry.folder, manifest)
