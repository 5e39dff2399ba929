"""Which rooms are open now: a room holds the lock file of its wiki while it lives.

Kept apart from ``room`` (which imports the wiki and the brief) so that
``tether status`` can look without loading either.
"""

from __future__ import annotations

from pathlib import Path

from tether.fs import lock_file, unlock_file

ROOMS_DIR = "rooms"
LOCK_PREFIX = ".lock-"


def held_by(path: Path) -> str | None:
    """The holder line of a lock some process holds now, else None."""
    try:
        handle = path.open("r", encoding="utf-8")
    except OSError:
        return None
    with handle:
        if not lock_file(handle, shared=True, wait=False):  # a room holds it: it is open now
            return handle.read().strip()
        unlock_file(handle)
    return None


def open_rooms(home: Path) -> list[str]:
    """The holder line (``room ID, pid N: question``) of every room open now, one per wiki."""
    folder = Path(home) / ROOMS_DIR
    if not folder.is_dir():
        return []
    return [h for p in sorted(folder.glob(LOCK_PREFIX + "*")) if (h := held_by(p))]
