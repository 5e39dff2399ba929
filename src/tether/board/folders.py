"""The board on disk: folder paths, the mutation lock, and crash-safe file steps.

Every change is made of steps after each of which the ticket exists exactly
once: a new ticket is written to a temp file and linked to its final name
(``link`` fails if the name exists, so two writers cannot both create it); an
update replaces the file in place (temp + fsync + rename); a move is one
``rename`` into the target folder. Temp files are dotfiles, which the board
ignores.
"""

from __future__ import annotations

import errno
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tether.board.errors import BoardError
from tether.board.states import State, all_folders, folder_of
from tether.core.errors import PathEscapeError
from tether.fs import (
    atomic_write_bytes,
    create_exclusive,
    fsync_dir,
    lock_file,
    resolve_inside,
)

LOCK_NAME = ".lock"
_GITIGNORE = b"# tether's lock and temp files\n.lock\n.*.tmp\n"
# board root -> its lock file (the git folder does not move while a process runs)
_LOCK_PATHS: dict[str, Path] = {}


def folder_path(
    root: Path, state: State, reason: str | None, *, real_root: Path | None = None
) -> Path:
    """The folder of a state/reason, held inside the board root (``real_root``: the root
    already resolved, see ``tether.fs.resolve_inside``)."""
    return resolve_inside(root, str(folder_of(state, reason)), real_root=real_root)


def ensure_folders(root: Path) -> None:
    """Create the missing state folders; one that leads out of the root is left alone.

    A board folder made here also gets a ``.gitignore`` for tether's lock and
    temp files (a folder that exists already is not given one).
    """
    if not root.exists():
        root.mkdir(parents=True, exist_ok=True)
        create_exclusive(root / ".gitignore", _GITIGNORE)
    for state, reason in all_folders():
        try:
            folder = folder_path(root, state, reason)
        except PathEscapeError:
            continue
        folder.mkdir(parents=True, exist_ok=True)


def git_dir(start: Path) -> Path | None:
    """The git folder of the work tree ``start`` is in (a linked work tree's own), or None."""
    current = Path(os.path.realpath(start))
    for folder in (current, *current.parents):
        marker = folder / ".git"
        if marker.is_dir():
            return marker
        if marker.is_file():
            try:
                text = marker.read_text(encoding="utf-8").strip()
            except OSError:
                return None
            if text.startswith("gitdir:"):
                target = Path(text.removeprefix("gitdir:").strip())
                target = target if target.is_absolute() else folder / target
                return target if target.is_dir() else None
            return None
    return None


def lock_path(root: Path) -> Path:
    """The board's lock file: in the git folder when the board is in a git work tree
    (``.git/tether/board-<key>.lock``), so no lock file is ever committed; else
    ``<root>/.lock``."""
    key = str(root)
    known = _LOCK_PATHS.get(key)
    if known is not None:
        return known
    real = os.path.realpath(root)
    found = git_dir(Path(real))
    if found is None:
        path = root / LOCK_NAME
    else:
        import hashlib  # here: a board outside a git work tree never needs it

        digest = hashlib.sha256(real.encode("utf-8", "surrogateescape")).hexdigest()[:16]
        path = found / "tether" / f"board-{digest}.lock"
    _LOCK_PATHS[key] = path
    return path


@contextmanager
def locked(root: Path, *, shared: bool = False) -> Iterator[None]:
    """Hold the board's lock (``lock_path``): exclusive for a change, shared for a read.

    It serialises tether's own writers across processes, and keeps a reader
    from seeing a ticket twice (or not at all) while it moves between folders.
    The kernel drops it when a holder dies, so a killed process never leaves
    the board locked. A reader that cannot create the lock file reads unlocked.
    Re-entrant within the process: a read inside a change uses the change's lock.
    """
    key = (str(root), threading.get_ident())
    if key in _HELD:
        yield
        return
    if shared:
        try:
            fd = _open_lock(root)
        except OSError:  # no board yet, or a read-only one
            yield
            return
    else:
        root.mkdir(parents=True, exist_ok=True)
        fd = _open_lock(root)
    try:
        lock_file(fd, shared=shared)
        _HELD.add(key)
        try:
            yield
        finally:
            _HELD.discard(key)
    finally:
        os.close(fd)


# (board root, thread) pairs holding the lock (flock is per open file, not per process).
_HELD: set[tuple[str, int]] = set()


def _open_lock(root: Path) -> int:
    path = lock_path(root)
    if path.parent != root:
        path.parent.mkdir(exist_ok=True)
    return os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)


def rewrite(path: Path, data: bytes) -> None:
    """Replace the content of ``path`` in place, atomically and durably."""
    atomic_write_bytes(path, data)


def rename_into(source: Path, target: Path) -> None:
    """Move ``source`` to ``target`` with one rename; refuses to replace a file."""
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists():
        raise BoardError(
            f"cannot move {source.name}: {target} already exists (a ticket with the same id?).",
            path=source,
        )
    try:
        source.rename(target)
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            raise BoardError("the file vanished while it was being moved.", path=source) from None
        raise
    fsync_dir(target.parent)
    fsync_dir(source.parent)
