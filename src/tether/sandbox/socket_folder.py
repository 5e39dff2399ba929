"""A sandbox's socket folder outside, named for the process that owns it.

The sockets a sandbox binds into the agent's view (the gate's, the network
proxy's) live in a short private folder in the system's temp folder: a Unix
socket path has at most 107 bytes. ``Sandbox.close`` removes it, but a
supervisor killed before it gets there (SIGKILL, a crash, a test runner's
timeout) leaves it behind, and a machine that runs many runs collects
hundreds.

So the folder's name says whose it is: the owner's pid namespace, its pid and
the clock tick it started at (``/proc/PID/stat``),
``tether-sbx-NS-PID-TICKS-xxxxxxxx``. Each new sandbox first removes the
folders whose owner is gone: no process with that pid, or one that started at
another tick (the pid was reused), or a zombie. A live owner's folder is never
touched, nor is a folder of another user, of another pid namespace (a
container sharing the temp folder: its pids mean nothing here), one named the
old way (``tether-sbx-xxxxxxxx``: no owner to ask), or anything when this
system has no ``/proc`` to ask (then folders are named the old way too).
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from pathlib import Path

from tether.core.process_tree import has_proc, is_alive, read_proc

PREFIX = "tether-sbx-"
# The longest socket name inside the folder ("proxy.sock") and mkdtemp's 8
# random characters: the owner goes into the name only while the paths fit.
_LONGEST_SOCKET = len("/proxy.sock")
_RANDOM = 8
_MAX_SOCKET_PATH = 107


def make(parent: str | None = None) -> Path:
    """A new socket folder in ``parent`` (the temp folder), after removing the
    folders there whose owner is gone."""
    where = parent if parent is not None else tempfile.gettempdir()
    reclaim(where)
    prefix = PREFIX
    me = read_proc(os.getpid()) if has_proc() else None
    space = _pid_namespace()
    if me is not None and space is not None:
        owned = f"{PREFIX}{space}-{me.pid}-{me.start_ticks}-"
        longest = len(where) + 1 + len(owned) + _RANDOM + _LONGEST_SOCKET
        if longest <= _MAX_SOCKET_PATH:
            prefix = owned
    return Path(tempfile.mkdtemp(prefix=prefix, dir=where))


def reclaim(parent: str) -> list[Path]:
    """Remove this user's socket folders in ``parent`` whose owner is gone; the
    folders removed."""
    space = _pid_namespace() if has_proc() else None
    if space is None:
        return []
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return []
    uid = os.getuid()
    removed = []
    for entry in entries:
        owner = owner_of(entry.name)
        if owner is None or owner[0] != space or is_alive(owner[1], owner[2]):
            continue
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISDIR(info.st_mode) and info.st_uid == uid:
            shutil.rmtree(entry.path, ignore_errors=True)
            removed.append(Path(entry.path))
    return removed


def owner_of(name: str) -> tuple[int, int, int] | None:
    """(pid namespace, pid, start tick) of the process a socket folder's name says
    owns it; None for a name that says no owner."""
    if not name.startswith(PREFIX):
        return None
    parts = name[len(PREFIX) :].split("-", 3)
    if len(parts) != 4 or not all(part.isdigit() for part in parts[:3]) or not parts[3]:
        return None
    return int(parts[0]), int(parts[1]), int(parts[2])


def _pid_namespace() -> int | None:
    """This process's pid namespace (the inode of ``/proc/self/ns/pid``)."""
    try:
        return Path("/proc/self/ns/pid").stat().st_ino
    except OSError:
        return None
