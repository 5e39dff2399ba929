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
from pathlib import Path
from typing import Any

from tether.errors import UsageError
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


def read_manifest(folder: Path) -> dict[str, Any]:
    try:
        data = json.loads((folder / MANIFEST).read_text("utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise UsageError(f"entry {folder.name}: unreadable {MANIFEST} ({exc})") from None
    if not isinstance(data, dict):
        raise UsageError(f"entry {folder.name}: {MANIFEST} is not an object")
    return data


def write_manifest(folder: Path, data: dict[str, Any]) -> None:
    atomic_write_json(folder / MANIFEST, data)


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


def dialog_reasons(manifest: dict[str, Any], raw_dir: Path) -> list[str]:
    """Why this entry needs a human (empty: an unattended run may take it)."""
    reasons: list[str] = []
    capture = manifest.get("capture")
    if not isinstance(capture, dict):
        reasons.append("key points to confirm with the user (no capture manifest)")
        capture = {}
    elif capture.get("dialog") != "none":
        reasons.append('key points to confirm with the user (capture `dialog` is not "none")')
    unset = [k for k in ("fidelity", "authority") if not capture.get(k)]
    if unset:
        reasons.append(f"{'/'.join(unset)} to set by the user (never guessed)")
    name = str(manifest.get("name", ""))
    if name and (raw_dir / name).exists():
        reasons.append(f"a name collision on accept: raw/{name} already exists")
    if manifest.get("sync_exit") == NEEDS_HUMAN_EXIT:
        reasons.append(f"a publish/sync exited {NEEDS_HUMAN_EXIT} (needs the user)")
    return reasons
