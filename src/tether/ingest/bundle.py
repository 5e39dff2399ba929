"""Copying a captured folder (a bundle) so that nothing in it reaches outside it.

A captured repository can hold symlinks: ``docs/LICENSE -> ../LICENSE`` is
harmless, ``evil.md -> /etc/passwd`` would put a file from outside the wiki into
``raw/``, where an agent reads it as the source. So a bundle is never copied
with its links as they are:

- folders and regular files are copied (a file is opened without following a
  link, so a file swapped for a link meanwhile is not read);
- a symlink is kept only when it resolves (every link followed) to a file or
  folder inside the bundle; it is written again as a relative link to that
  place, so it also stays inside the copy;
- anything else is left out and listed as *skipped*, with the reason: a link
  that resolves outside the bundle, a link loop, a link to nothing, a fifo,
  socket or device.

The digest of a bundle covers what is copied: each regular file's path and
bytes in sorted order (as before links were handled), then each kept link's
path and target. Nothing outside the bundle is ever read for it.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tether.core.errors import PathEscapeError
from tether.fs import SymlinkLoopError, resolve_inside

OUTSIDE = "symlink resolves outside the bundle"
LOOP = "symlink loop"
DANGLING = "symlink points at nothing"
SPECIAL = "not a regular file, folder or symlink"
LINK_TO_SPECIAL = "symlink points at something that is not a regular file or folder"

_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
_BLOCK = 1 << 20


@dataclass(frozen=True)
class Skipped:
    """A part of the bundle that is not copied, and why."""

    path: str  # relative to the bundle, "/" separated
    reason: str
    target: str | None = None  # a symlink's target as written

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def __str__(self) -> str:
        link = f" -> {self.target}" if self.target is not None else ""
        return f"{self.path}{link}: {self.reason}"


@dataclass
class Copied:
    sha256: str
    size: int  # bytes of regular files copied
    files: int
    skipped: list[Skipped] = field(default_factory=list)


@dataclass(frozen=True)
class _Item:
    rel: str
    kind: str  # "dir" | "file" | "link" | "skip"
    target: str | None = None  # for "link": the relative target to write
    skipped: Skipped | None = None


def _survey(root: Path) -> Iterator[_Item]:
    """The bundle's parts depth first in sorted order, links judged, nothing followed.

    The order is that of sorting the paths by their parts, so a folder's parts
    come right after it.
    """
    real_root = root.resolve()
    stack: list[Iterator[str]] = [iter(_names(real_root, ""))]
    while stack:
        rel = next(stack[-1], None)
        if rel is None:
            stack.pop()
            continue
        try:
            st = os.lstat(real_root / rel)
        except OSError:
            continue  # gone since the listing
        if stat.S_ISDIR(st.st_mode):
            yield _Item(rel, "dir")
            stack.append(iter(_names(real_root, rel)))
        elif stat.S_ISREG(st.st_mode):
            yield _Item(rel, "file")
        elif stat.S_ISLNK(st.st_mode):
            yield _judge_link(real_root, rel)
        else:
            yield _Item(rel, "skip", skipped=Skipped(rel, SPECIAL))


def _names(real_root: Path, rel_dir: str) -> list[str]:
    try:
        folder = real_root / rel_dir if rel_dir else real_root
        names = sorted(child.name for child in folder.iterdir())
    except OSError:
        return []
    return [f"{rel_dir}/{name}" if rel_dir else name for name in names]


def _judge_link(real_root: Path, rel: str) -> _Item:
    full = real_root / rel
    try:
        written = str(full.readlink())
    except OSError:
        written = None
    try:
        real = resolve_inside(real_root, rel)
    except SymlinkLoopError:
        return _Item(rel, "skip", skipped=Skipped(rel, LOOP, written))
    except PathEscapeError:
        return _Item(rel, "skip", skipped=Skipped(rel, OUTSIDE, written))
    try:
        st = real.stat()
    except OSError:
        return _Item(rel, "skip", skipped=Skipped(rel, DANGLING, written))
    if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
        return _Item(rel, "skip", skipped=Skipped(rel, LINK_TO_SPECIAL, written))
    target = os.path.relpath(real, full.parent)
    return _Item(rel, "link", target=target)


def _copy_file(source: Path, dest: Path, digest: Any) -> int | None:
    """Copy one regular file without following a link; its size, or None if it is not one."""
    try:
        fd = os.open(source, _READ_FLAGS)
    except OSError:
        return None  # a link now (ELOOP), or gone
    with os.fdopen(fd, "rb") as handle:
        st = os.fstat(handle.fileno())
        if not stat.S_ISREG(st.st_mode):
            return None
        size = 0
        with dest.open("xb") as out:
            for block in iter(lambda: handle.read(_BLOCK), b""):
                digest.update(block)
                out.write(block)
                size += len(block)
            out.flush()
            os.fsync(out.fileno())
    dest.chmod(stat.S_IMODE(st.st_mode))
    os.utime(dest, ns=(st.st_atime_ns, st.st_mtime_ns))
    return size


def copy_bundle(source: Path, dest: Path) -> Copied:
    """Copy the folder ``source`` to ``dest`` (which must not exist), as the module says."""
    real_root = Path(source).resolve()
    dest.mkdir()
    digest = hashlib.sha256()
    size = 0
    files = 0
    skipped: list[Skipped] = []
    links: list[_Item] = []
    for item in _survey(real_root):
        if item.kind == "dir":
            (dest / item.rel).mkdir()
        elif item.kind == "file":
            digest.update(item.rel.encode() + b"\0")
            copied = _copy_file(real_root / item.rel, dest / item.rel, digest)
            if copied is None:
                skipped.append(Skipped(item.rel, "changed into something else while copied"))
                continue
            size += copied
            files += 1
        elif item.kind == "link":
            links.append(item)
        elif item.skipped is not None:
            skipped.append(item.skipped)
    for item in links:  # after the files, so each points at a copied part
        assert item.target is not None
        (dest / item.rel).symlink_to(item.target)
        digest.update(b"\0link\0" + item.rel.encode() + b"\0" + item.target.encode() + b"\0")
    return Copied(digest.hexdigest(), size, files, skipped)


def bundle_digest(root: Path) -> tuple[str, int]:
    """(digest, size) of a bundle as ``copy_bundle`` would copy it, without copying."""
    real_root = Path(root).resolve()
    digest = hashlib.sha256()
    size = 0
    links: list[_Item] = []
    for item in _survey(real_root):
        if item.kind == "file":
            digest.update(item.rel.encode() + b"\0")
            try:
                fd = os.open(real_root / item.rel, _READ_FLAGS)
            except OSError:
                continue
            with os.fdopen(fd, "rb") as handle:
                for block in iter(lambda: handle.read(_BLOCK), b""):
                    digest.update(block)
                    size += len(block)
        elif item.kind == "link":
            links.append(item)
    for item in links:
        assert item.target is not None
        digest.update(b"\0link\0" + item.rel.encode() + b"\0" + item.target.encode() + b"\0")
    return digest.hexdigest(), size
