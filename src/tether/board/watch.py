"""Knowing that nothing changed without a stat per file: Linux inotify on the board folders.

A warm ``Board.load`` must notice every change (a ticket moved, added, deleted,
or edited in place by an editor) yet cost far less than parsing. The portable
way is one ``stat`` per file; on Linux, a kernel watch on each state folder
says "something happened here" instead, and a warm load with no event pending
is a single non-blocking ``read``. Events are queued by the kernel as part of
the write itself, so a change made before the read (by any process) is seen.

Used only where it is exact: local Linux filesystems (network and FUSE mounts
miss changes made elsewhere, so there the stat walk is used), and only in the
process that set it up (a forked child gets its own). Events about dotfiles
(tether's temp files, the lock file) are ignored; anything else, an overflow
of the queue, or a watched folder going away counts as a change.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import struct
import sys
from pathlib import Path

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
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
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


class FolderWatch:
    """inotify on a set of folders; ``changed()`` drains the queue and says if anything moved."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._pid = os.getpid()
        self._folders: dict[str, int] = {}

    @classmethod
    def start(cls, root: str) -> FolderWatch | None:
        """A watch for a board root, or ``None`` where watching would not be exact."""
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
        """Watch one folder (again: no cost); False if it cannot be watched."""
        assert _LIBC is not None
        if folder in self._folders:
            return True
        wd = _LIBC.inotify_add_watch(self._fd, os.fsencode(folder), _MASK)
        if wd < 0:
            return ctypes.get_errno() == errno.ENOENT  # a missing folder: its parent sees it come
        self._folders[folder] = wd
        return True

    def changed(self) -> tuple[bool, set[str]]:
        """Drain pending events: (anything changed?, the files named in the events).

        The files are ``folder/name`` paths, as ``os.scandir`` spells them; a
        reader drops its cached parse of those even if their size and mtime
        look unchanged.
        """
        change = False
        touched: set[str] = set()
        by_wd = {wd: folder for folder, wd in self._folders.items()}
        while True:
            try:
                data = os.read(self._fd, 1 << 16)
            except BlockingIOError:
                return change, touched
            offset = 0
            while offset < len(data):
                wd, mask, _cookie, length = _EVENT.unpack_from(data, offset)
                name = data[offset + 16 : offset + 16 + length].split(b"\0", 1)[0]
                offset += 16 + length
                if mask & _ALWAYS:
                    change = True
                    if mask & (IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF):
                        self._forget(wd)
                elif name and not name.startswith(b"."):
                    change = True
                    folder = by_wd.get(wd)
                    if folder is not None:
                        touched.add(f"{folder}/{os.fsdecode(name)}")

    def _forget(self, wd: int) -> None:
        for folder, known in list(self._folders.items()):
            if known == wd:
                del self._folders[folder]

    def close(self) -> None:
        if self._fd >= 0 and os.getpid() == self._pid:
            os.close(self._fd)
        self._fd = -1

    def __del__(self) -> None:
        # inotify instances are a per-user kernel resource (often 128): never leak one.
        self.close()
