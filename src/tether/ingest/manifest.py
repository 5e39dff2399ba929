"""An entry's manifest: where it came from, what it is, and whether it needs a human.

Each entry is a folder holding ``manifest.json`` and the collected file (or,
for a bundle, the collected folder) under its original name. The manifest::

    {"id": "notes.md", "kind": "source", "name": "notes.md",
     "origin": "/home/me/Downloads/notes.md", "size": 1234, "sha256": "…",
     "collected_at": "2026-…Z", "released_at": "2026-…Z" | null,
     "capture": {"fidelity": "verbatim", "authority": "primary", "dialog": "none"} | null,
     "sync_exit": 42 | null, "ticket": "T-…" | null,
     "skipped": [{"path": "evil.md", "reason": "symlink resolves outside the bundle",
                  "target": "/etc/passwd"}]}

``skipped`` (bundles only) lists what was left out of the copy: symlinks that
resolve outside the bundle, loops, links to nothing, special files
(``tether.ingest.bundle``).

An entry can go through an unattended run only when its capture manifest
says so: ``fidelity`` and ``authority`` set (they are never guessed) and
``dialog: "none"`` (no key points to confirm), no name collision in ``raw/``,
and no publish/sync that exited 42.
"""

from __future__ import annotations

import hashlib
import json
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tether.core.errors import UsageError
from tether.fs import atomic_write_json
from tether.ingest.bundle import bundle_digest

MANIFEST = "manifest.json"
SOURCE = "source"
BUNDLE = "bundle"
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")
NEEDS_HUMAN_EXIT = 42


def entry_id(name: str) -> str:
    """A folder-safe id from a file name: other characters become '-'."""
    cleaned = _SAFE.sub("-", name).strip("-.")
    if not cleaned:
        raise UsageError(f"cannot make an entry name from {name!r}")
    return cleaned


def sha256_of(path: Path) -> tuple[str, int]:
    """(hex digest, size) of a file, or of a bundle folder as it is copied.

    A folder's digest covers its regular files in sorted order and the symlinks
    that stay inside it (``tether.ingest.bundle``); nothing a link points at
    outside the folder is read.
    """
    if path.is_dir():
        return bundle_digest(path)
    digest = hashlib.sha256()
    size = 0
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
            size += len(block)
    return digest.hexdigest(), size


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@dataclass(frozen=True)
class Capture:
    """What the capture manifest settles; a field that is not a word counts as not set."""

    fidelity: str | None
    authority: str | None
    dialog: str | None

    @classmethod
    def parse(cls, data: Mapping[str, Any]) -> Capture:
        return cls(
            _text(data.get("fidelity")), _text(data.get("authority")), _text(data.get("dialog"))
        )


@dataclass(frozen=True)
class Manifest:
    """An entry's manifest: the fields tether reads, typed, and ``fields`` as on disk.

    ``fields`` keeps every key in its order (a key tether does not know
    included), so writing a manifest back changes only what was changed; a
    known field of the wrong type reads as unset.
    """

    fields: Mapping[str, Any]
    kind: str
    name: str | None  # None: the entry's id
    origin: str | None
    size: int | None
    sha256: str | None
    released_at: str | None
    capture: Capture | None
    sync_exit: int | None
    ticket: str | None
    skipped_paths: frozenset[str]  # the ``path`` of each ``skipped`` record
    session_line: str | None

    @classmethod
    def parse(cls, data: Mapping[str, Any]) -> Manifest:
        capture = data.get("capture")
        skipped = data.get("skipped")
        return cls(
            fields=dict(data),
            kind=str(data.get("kind", SOURCE)),
            name=None if "name" not in data else str(data["name"]),
            origin=_text(data.get("origin")),
            size=_int(data.get("size")),
            sha256=_text(data.get("sha256")),
            released_at=_text(data.get("released_at")),
            capture=Capture.parse(capture) if isinstance(capture, dict) else None,
            sync_exit=_int(data.get("sync_exit")),
            ticket=_text(data.get("ticket")),
            skipped_paths=frozenset(
                str(s["path"])
                for s in (skipped if isinstance(skipped, list) else [])
                if isinstance(s, dict) and "path" in s
            ),
            session_line=_text(data.get("session_line")),
        )

    def changed(self, **changes: Any) -> Manifest:
        """This manifest with ``changes`` written over it (a new key goes last)."""
        return Manifest.parse({**self.fields, **changes})

    def skipped(self) -> list[Any]:
        """The ``skipped`` records as on disk."""
        value = self.fields.get("skipped")
        return list(value) if isinstance(value, list) else []

    def as_dict(self) -> dict[str, Any]:
        """The manifest as written to disk, key order kept."""
        return dict(self.fields)


def read_manifest(folder: Path) -> Manifest:
    try:
        data = json.loads((folder / MANIFEST).read_text("utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise UsageError(f"entry {folder.name}: unreadable {MANIFEST} ({exc})") from None
    if not isinstance(data, dict):
        raise UsageError(f"entry {folder.name}: {MANIFEST} is not an object")
    return Manifest.parse(data)


def write_manifest(folder: Path, manifest: Manifest) -> None:
    atomic_write_json(folder / MANIFEST, manifest.as_dict())


def load_capture(path: Path | None) -> dict[str, Any] | None:
    if path is None:
        return None
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise UsageError(f"cannot read the capture manifest {path}: {exc}") from None
    if not isinstance(data, dict):
        raise UsageError(f"the capture manifest {path} must be a JSON object")
    return data


def name_collision(manifest: Manifest, target: Path) -> bool:
    """Whether ``target`` (the entry's name in ``raw/``) holds something other than this entry.

    Nothing there, or a file or folder (not a symlink) with the entry's own
    ``sha256`` (its earlier accept), is no collision; anything else is one,
    including what cannot be read or is no regular file or folder.
    """
    try:
        mode = target.lstat().st_mode
    except FileNotFoundError:
        return False
    except OSError:
        return True
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)) or manifest.sha256 is None:
        return True
    try:
        return sha256_of(target)[0] != manifest.sha256
    except OSError:
        return True


def dialog_reasons(manifest: Manifest, raw_dir: Path) -> list[str]:
    """Why this entry needs a human (empty: an unattended run may take it)."""
    reasons: list[str] = []
    capture = manifest.capture
    if capture is None:
        reasons.append("key points to confirm with the user (no capture manifest)")
        capture = Capture(None, None, None)
    elif capture.dialog != "none":
        reasons.append('key points to confirm with the user (capture `dialog` is not "none")')
    unset = [
        k for k, v in (("fidelity", capture.fidelity), ("authority", capture.authority)) if not v
    ]
    if unset:
        reasons.append(f"{'/'.join(unset)} to set by the user (never guessed)")
    name = manifest.name or ""
    if name and name_collision(manifest, raw_dir / name):
        reasons.append(f"a name collision on accept: raw/{name} already exists")
    if manifest.sync_exit == NEEDS_HUMAN_EXIT:
        reasons.append(f"a publish/sync exited {NEEDS_HUMAN_EXIT} (needs the user)")
    return reasons
