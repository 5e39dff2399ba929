"""Files: atomic writes, and user-given paths held inside a root.

Every file tether writes goes through ``atomic_write_*``: a temp file in the
same folder, fsync, ``os.replace``, fsync of the folder. A reader sees the old
content or the new, never a half-written file, and a crash loses neither.

``resolve_inside`` resolves a path the way the kernel would open it (symlinks
followed, ``..`` applied after each link) and refuses it when the result is
outside the root.

``lock_file`` (and ``flocked``) is the one file lock every lock file uses.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePath
from typing import IO, Any

from tether.core.errors import PathEscapeError, UsageError

# Linux gives up after 40 links in one lookup; so do we.
_MAX_SYMLINK_HOPS = 40


class SymlinkLoopError(PathEscapeError):
    """A path that cannot be resolved because its symlinks loop (or nest too deep)."""

    def __init__(self, given: str, root: str) -> None:
        super().__init__(given, root)
        self.args = (
            f"path {given!r} cannot be resolved: more than {_MAX_SYMLINK_HOPS} symlinks "
            f"(a loop?); refusing it. Give a path inside {root} without the loop.",
        )


def write_temp_beside(
    path: Path, data: bytes, *, keep_mode: bool = False, durable: bool = True
) -> Path:
    """``data`` in a new temp file beside ``path``, written whole and fsynced.

    The caller puts it in place (rename or link) and removes it if that fails.
    ``keep_mode``: the temp file gets the permission bits of a regular file at
    ``path``; else the umask default. ``durable=False`` skips the fsync (see
    ``atomic_write_bytes``).
    """
    folder = path.parent
    folder.mkdir(parents=True, exist_ok=True)
    # os.urandom(n).hex() is what secrets.token_hex(n) returns, without loading secrets
    # (random, base64, hmac) in every process that writes a file
    temp = folder / f".{path.name}.{os.urandom(6).hex()}.tmp"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
    try:
        if keep_mode:
            try:
                existing = os.lstat(path)
            except FileNotFoundError:
                pass
            else:
                if stat.S_ISREG(existing.st_mode):
                    os.fchmod(fd, stat.S_IMODE(existing.st_mode))
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        if durable:
            os.fsync(fd)
    except BaseException:
        os.close(fd)
        temp.unlink(missing_ok=True)
        raise
    os.close(fd)
    return temp


def atomic_write_bytes(path: Path, data: bytes, *, durable: bool = True) -> None:
    """Replace ``path`` with ``data`` atomically and durably; creates parent folders.

    A symlink at ``path`` is replaced by a regular file (the link is not followed).
    An existing file's permission bits are kept; a new file gets the umask default.
    ``durable=False`` (for caches only): still atomic for every reader, but not
    fsynced, so a crash may leave the old content, or a torn file the reader
    must detect and ignore.
    """
    path = Path(path)
    temp = write_temp_beside(path, data, keep_mode=True, durable=durable)
    try:
        temp.replace(path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    if durable:
        fsync_dir(path.parent)


def create_exclusive(path: Path, data: bytes) -> bool:
    """Write a new file at ``path`` whole, or return False if the name is taken."""
    temp = write_temp_beside(path, data)
    try:
        os.link(temp, path)
    except FileExistsError:
        return False
    finally:
        temp.unlink(missing_ok=True)
    fsync_dir(path.parent)
    return True


def atomic_write_text(path: Path, text: str, encoding: str = "utf-8") -> None:
    """``atomic_write_bytes`` for text; newlines are written exactly as given."""
    atomic_write_bytes(path, text.encode(encoding))


def atomic_write_json(path: Path, obj: Any, *, indent: int | None = 2) -> None:
    """Write ``obj`` as JSON (UTF-8, trailing newline) atomically."""
    text = json.dumps(obj, indent=indent, ensure_ascii=False)
    atomic_write_text(path, text + "\n")


def fsync_dir(folder: Path) -> None:
    """Make a rename or a new name in ``folder`` durable."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def resolve_inside(root: Path, user_path: str | Path, *, real_root: Path | None = None) -> Path:
    """The real path of ``user_path`` (relative to ``root`` unless absolute), kept in ``root``.

    Symlinks are followed wherever they exist (also dangling ones: their target
    counts), ``..`` is applied to the resolved parent, and the root itself is
    resolved the same way. Raises ``PathEscapeError`` if the result is not
    ``root`` or below it, or if it cannot be resolved (a symlink loop). The path
    need not exist. Open the result promptly: a link created later is not seen.

    ``real_root``: ``root`` as an earlier call resolved it (``resolve_inside(root,
    ".")``); a relative path is then resolved from there, looking only at its own
    components (a board resolves its 19 folders this way: a few ``lstat`` calls
    each instead of one per component of the whole path, twice).
    """
    given = str(user_path)
    if "\0" in given:
        raise UsageError(f"path {given!r} contains a NUL byte")
    candidate = Path(user_path)
    if real_root is not None and not candidate.is_absolute():
        real = _resolve(candidate, given, str(real_root), start=real_root)
    else:
        real_root = _resolve(Path(root).absolute(), given, str(root))
        if not candidate.is_absolute():
            candidate = real_root / candidate
        real = _resolve(candidate, given, str(real_root))
    if not real.is_relative_to(real_root):
        raise PathEscapeError(given, str(real_root))
    return real


def _resolve(path: Path, given: str, root: str, start: Path | None = None) -> Path:
    """Resolve every symlink in absolute ``path`` component by component (or, from an
    already real ``start``, in relative ``path``).

    Unlike ``os.path.realpath`` this never returns a path with a link left in it
    (a loop is an error, not a silent half-resolution), on every Python version.
    """
    # strings, not Path objects: a board resolves dozens of paths per command
    if start is not None:
        pending = list(reversed(path.parts))
        current = str(start)
    else:
        pending = list(reversed(path.parts[1:]))
        current = path.anchor or "/"
    hops = 0
    while pending:
        part = pending.pop()
        if part in ("", "."):
            continue
        if part == "..":
            current = os.path.dirname(current)  # noqa: PTH120 - strings, see above
            continue
        candidate = os.path.join(current, part)  # noqa: PTH118 - strings, see above
        try:
            mode = os.lstat(candidate).st_mode
        except OSError as exc:
            if exc.errno in (errno.ENOENT, errno.ENOTDIR, errno.EACCES):
                # Nothing there (or not searchable): no link to follow below it.
                current = candidate
                continue
            raise
        if not stat.S_ISLNK(mode):
            current = candidate
            continue
        hops += 1
        if hops > _MAX_SYMLINK_HOPS:
            raise SymlinkLoopError(given, root)
        target = PurePath(os.readlink(candidate))  # noqa: PTH115 - strings, see above
        if target.is_absolute():
            current = target.anchor
        pending.extend(reversed(target.parts[1:] if target.is_absolute() else target.parts))
    return Path(current)


def lock_file(file: int | IO[Any], *, shared: bool = False, wait: bool = True) -> bool:
    """Lock an open file (``flock``), shared or exclusive; True once it holds the lock.

    Without ``wait`` it returns False at once while another open file holds a
    conflicting lock. The lock belongs to the open file: closing it releases it.
    """
    mode = fcntl.LOCK_SH if shared else fcntl.LOCK_EX
    try:
        fcntl.flock(file, mode if wait else mode | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def unlock_file(file: int | IO[Any]) -> None:
    fcntl.flock(file, fcntl.LOCK_UN)


@contextmanager
def flocked(file: int | IO[Any]) -> Iterator[None]:
    """Hold an exclusive lock on an open file for the block (waiting for it)."""
    lock_file(file)
    try:
        yield
    finally:
        unlock_file(file)
