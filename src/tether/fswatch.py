"""Knowing that nothing changed without a stat per file: Linux inotify on folders.

Speed path kept by bench/wiki.py and bench/tick.py: a freshness check costs ~0.1 ms, not a walk.

A warm read of a folder tree (the board's state folders, a wiki's page folders)
must notice every change (a file moved, added, deleted, or edited in place by
an editor) yet cost far less than a ``stat`` per file. On Linux, a kernel watch
on each folder says "something happened here, to this name" instead, and a
check with no event pending is a single non-blocking ``read``. Events are
queued by the kernel as part of the write itself, so a change made before the
read (by any process) is seen.

Used only where it is exact: local Linux filesystems (network and FUSE mounts
miss changes made elsewhere, so there a stat walk is used), and only in the
process that set it up (a forked child gets its own). A folder watch reports
changes made through that folder's entries: a file also reachable through
another hard link can change unseen, unless the file itself is watched too
(``add_file``: its watch is on the inode, whatever name a write goes through).
Events about dotfiles (temp files, lock files) are ignored; anything else, an
overflow of the queue, or a watched folder going away counts as a change, and
the last two make the drained names incomplete.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import struct
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

IN_MODIFY = 0x2
IN_ATTRIB = 0x4
IN_MOVED_FROM = 0x40
IN_MOVED_TO = 0x80
IN_CREATE = 0x100
IN_DELETE = 0x200
IN_DELETE_SELF = 0x400
IN_MOVE_SELF = 0x800
IN_Q_OVERFLOW = 0x4000
IN_IGNORED = 0x8000
IN_ONLYDIR = 0x01000000
IN_DONT_FOLLOW = 0x02000000
IN_MASK_ADD = 0x20000000
_MASK = (
    IN_MODIFY
    | IN_ATTRIB
    | IN_MOVED_FROM
    | IN_MOVED_TO
    | IN_CREATE
    | IN_DELETE
    | IN_DELETE_SELF
    | IN_MOVE_SELF
    | IN_ONLYDIR
)
# A file's own watch: its bytes or attributes changed (through any of its names), or it went.
_FILE_MASK = IN_MODIFY | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF | IN_DONT_FOLLOW | IN_MASK_ADD
_ALWAYS = IN_Q_OVERFLOW | IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF
_EVENT = struct.Struct("iIII")

# statfs f_type of filesystems whose changes may come from elsewhere (no events for those).
_REMOTE = frozenset(
    {
        0x6969,  # NFS
        0x517B,  # SMB
        0xFF534D42,  # CIFS
        0xFE534D42,  # SMB2
        0x65735546,  # FUSE
        0x01021997,  # 9P (also WSL's Windows drives)
        0x73757245,  # CODA
        0x5346414F,  # AFS
        0x00C36400,  # CEPH
        0x47504653,  # GPFS
        0x0BD00BD0,  # Lustre
    }
)


def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux") or sys.maxsize <= 2**32:
        return None
    # The interpreter's own symbols include libc's; ctypes.util.find_library would
    # cost an import of subprocess and a run of ldconfig.
    with contextlib.suppress(OSError):
        libc = ctypes.CDLL(None, use_errno=True)
        if hasattr(libc, "inotify_init1"):
            return libc
    from ctypes.util import find_library

    try:
        return ctypes.CDLL(find_library("c") or None, use_errno=True)
    except OSError:
        return None


_LIBC = _libc()


def _is_remote(path: str) -> bool:
    """True for network/FUSE filesystems, or when it cannot be told."""
    assert _LIBC is not None
    buffer = ctypes.create_string_buffer(256)  # struct statfs; f_type is the first long
    if _LIBC.statfs(os.fsencode(path), buffer) != 0:
        return True
    (f_type,) = struct.unpack_from("l", buffer.raw)
    return (f_type & 0xFFFFFFFF) in _REMOTE


@dataclass(frozen=True)
class Drained:
    """What the pending events say."""

    changed: bool  # anything at all happened
    exact: bool  # every change is named in ``names`` (no overflow, no watched folder lost)
    names: frozenset[str]  # ``folder/name`` of each entry an event was about


class FolderWatch:
    """inotify on folders (and files); ``drain()`` empties the queue and says what moved."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._pid = os.getpid()
        self._folders: dict[str, int] = {}
        self._folder_of: dict[int, str] = {}
        self._files: dict[int, set[str]] = {}  # a file watch is per inode: maybe several names

    @classmethod
    def start(cls, root: str) -> FolderWatch | None:
        """A watch for folders under ``root``, or ``None`` where watching would not be exact."""
        if _LIBC is None or not Path(root).is_dir() or _is_remote(root):
            return None
        fd = _LIBC.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if fd < 0:
            return None
        return cls(fd)

    @property
    def usable(self) -> bool:
        return self._fd >= 0 and os.getpid() == self._pid

    def add(self, folder: str) -> bool:
        """Watch one folder (again: no cost); False if it cannot be watched exactly.

        A missing folder is fine (its parent's watch sees it come); a folder on a
        network or FUSE mount (a mount point below the root) cannot be watched.
        """
        assert _LIBC is not None
        if folder in self._folders:
            return True
        wd = _LIBC.inotify_add_watch(self._fd, os.fsencode(folder), _MASK)
        if wd < 0:
            return ctypes.get_errno() == errno.ENOENT
        self._folders[folder] = wd
        self._folder_of[wd] = folder
        # watched as a file before (it was one when listed): the folder's mask replaced that
        self._files.pop(wd, None)
        return not _is_remote(folder)

    def add_file(self, path: str) -> bool:
        """Watch one file itself (not through a symlink); False if that failed.

        Call it again after the name may have got a new inode (a save by rename).
        The mask is added to any watch the inode has, so a folder that took the
        file's name in the meantime keeps its folder watch.
        """
        assert _LIBC is not None
        wd = _LIBC.inotify_add_watch(self._fd, os.fsencode(path), _FILE_MASK)
        if wd < 0:
            return ctypes.get_errno() == errno.ENOENT  # gone: its folder's watch saw that
        if wd not in self._folder_of:
            self._files.setdefault(wd, set()).add(path)
        return True

    def changed(self) -> tuple[bool, set[str]]:
        """Drain pending events: (anything changed?, the files named in the events).

        The files are ``folder/name`` paths, as ``os.scandir`` spells them; a
        reader drops its cached parse of those even if their size and mtime
        look unchanged.
        """
        drained = self.drain()
        return drained.changed, set(drained.names)

    def drain(self) -> Drained:
        """Empty the event queue (one non-blocking ``read`` when nothing happened)."""
        change = False
        exact = True
        touched: set[str] = set()
        while True:
            try:
                data = os.read(self._fd, 1 << 16)
            except BlockingIOError:
                return Drained(change, exact, frozenset(touched))
            offset = 0
            while offset < len(data):
                wd, mask, _cookie, length = _EVENT.unpack_from(data, offset)
                name = data[offset + 16 : offset + 16 + length].split(b"\0", 1)[0]
                offset += 16 + length
                names = self._files.get(wd)
                if names is not None:  # a watched file: never makes the names incomplete
                    change = True
                    touched.update(names)
                    if mask & IN_IGNORED:
                        del self._files[wd]
                    continue
                if mask & _ALWAYS:
                    change = True
                    exact = False
                    if mask & (IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF):
                        self._forget(wd)
                elif name and not name.startswith(b"."):
                    change = True
                    folder = self._folder_of.get(wd)
                    if folder is None:
                        exact = False
                    else:
                        touched.add(f"{folder}/{os.fsdecode(name)}")

    def _forget(self, wd: int) -> None:
        folder = self._folder_of.pop(wd, None)
        if folder is not None and self._folders.get(folder) == wd:
            del self._folders[folder]

    # os's functions are bound here: at interpreter exit this module's globals may be gone
    # before the last watch is collected.
    def close(self, _getpid: Any = os.getpid, _close: Any = os.close) -> None:
        if self._fd >= 0 and _getpid() == self._pid:
            _close(self._fd)
        self._fd = -1

    def __del__(self) -> None:
        # inotify instances are a per-user kernel resource (often 128): never leak one.
        self.close()
