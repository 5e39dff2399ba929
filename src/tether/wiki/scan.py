"""Looking at a wiki's files: the walk of the page folder, and a look at one named path.

Hidden names and, at the top of the page folder, ``raw/``, ``incoming/`` and
``quarantine/`` are skipped; symlinked folders are not entered; a symlinked
file counts only when it resolves inside the page folder (others are
*escaped*). A page is seen with its change key — modification time, change
time, size and inode — taken before it is read; any other file counts only by
its path, so it costs no ``stat`` (its type comes from the folder listing).

With a watch, each folder is watched before it is listed and each page before
it is stat-ed (a page's own watch sees writes through any of its hard links).
A symlinked file is *unwatched*: its target can change through another path
(even one leaving the wiki), so it is looked at on every update.
"""

from __future__ import annotations

import os
import stat
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from tether.wiki.layout import RESERVED, Wiki, is_page

if TYPE_CHECKING:
    from tether.fswatch import FolderWatch

# What tells a changed page from an unchanged one: st_mtime_ns, st_ctime_ns, st_size and
# st_ino, packed (compared as one value, stored as one column).
StatKey = bytes
_KEY = struct.Struct("<qqqQ")
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC


def key_of(st: os.stat_result) -> StatKey:
    return _KEY.pack(st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino)


def ctime_of(key: StatKey) -> int:
    return int(_KEY.unpack(key)[1])


def size_of(key: StatKey) -> int:
    return int(_KEY.unpack(key)[2])


@dataclass
class Listing:
    """What a walk (or a set of looks) found: each file the index takes, with its key."""

    files: dict[str, StatKey | None] = field(default_factory=dict)  # key None: not a page
    unwatched: set[str] = field(default_factory=set)  # symlinked files
    escaped: list[str] = field(default_factory=list)  # symlinks leaving the page folder
    watched: bool = True  # every folder walked was watched before it was listed


@dataclass(frozen=True)
class Look:
    """What one path is now."""

    path: str
    taken: bool  # a file the index takes (False: gone, or not one to take)
    key: StatKey | None  # for a page
    folder: bool  # a folder the walk enters (new, or moved in)
    unwatched: bool  # a symlink: look at it on every update
    watched: bool = True  # the watch (if any) took the page


def walk(
    wiki: Wiki,
    listing: Listing,
    start: str = "",
    watch: FolderWatch | None = None,
) -> None:
    """Every file under ``start`` (a folder relative to the page folder; "" for all).

    With ``watch``, each folder is added before it is listed and each page
    before it is stat-ed, so a change made after that is an event.
    """
    base = str(wiki.pages_dir)
    cut = len(base) + 1
    files = listing.files
    pack = _KEY.pack
    stack = [f"{base}/{start}" if start else base]
    while stack:
        folder = stack.pop()
        if watch is not None and not watch.add(folder):
            listing.watched = False
        prefix = f"{folder[cut:]}/" if folder != base else ""
        try:
            fd = os.open(folder, _DIR_FLAGS)
        except OSError:
            continue
        try:
            with os.scandir(fd) as entries:
                for entry in entries:
                    name = entry.name
                    if name[0] == ".":
                        continue
                    try:
                        if entry.is_file(follow_symlinks=False):
                            if not is_page(name):
                                files[prefix + name] = None
                                continue
                            if watch is not None and not watch.add_file(f"{folder}/{name}"):
                                listing.watched = False
                            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
                            files[prefix + name] = pack(
                                st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino
                            )
                        elif entry.is_dir(follow_symlinks=False):
                            if prefix or name not in RESERVED:
                                stack.append(f"{folder}/{name}")
                        elif entry.is_symlink():
                            _take_link(wiki, prefix + name, listing)
                    except OSError:  # gone since the listing
                        continue
        finally:
            os.close(fd)


def look(wiki: Wiki, rel: str, watch: FolderWatch | None = None) -> Look:
    """What the walk would make of the path ``rel``, without walking.

    With ``watch``, a page found there is watched (again: it may be a new inode)
    and then stat-ed once more, so a change after that is an event; the Look's
    ``watched`` is False if the watch could not take it.
    """
    parts = rel.split("/")
    gone = Look(rel, False, None, False, False)
    if any(not part or part[0] == "." for part in parts):
        return gone
    full = f"{wiki.pages_dir}/{rel}"
    try:
        st = os.lstat(full)
    except OSError:
        return gone
    if stat.S_ISDIR(st.st_mode):
        return Look(rel, False, None, len(parts) > 1 or rel not in RESERVED, False)
    if stat.S_ISLNK(st.st_mode):
        listing = Listing()
        _take_link(wiki, rel, listing)
        return Look(rel, rel in listing.files, listing.files.get(rel), False, True)
    if not stat.S_ISREG(st.st_mode):
        return gone
    if not is_page(rel):
        return Look(rel, True, None, False, False)
    if watch is not None:
        if not watch.add_file(full):
            return Look(rel, False, None, False, False, watched=False)
        try:
            st = os.lstat(full)
        except OSError:
            return gone
        if not stat.S_ISREG(st.st_mode):  # replaced meanwhile: its folder's event is pending
            return gone
    return Look(rel, True, key_of(st), False, False)


def _take_link(wiki: Wiki, rel: str, listing: Listing) -> None:
    """A symlinked file: taken when it resolves inside the page folder to a regular file."""
    listing.unwatched.add(rel)
    full = f"{wiki.pages_dir}/{rel}"
    if not _inside(full, wiki.pages_dir):
        listing.escaped.append(rel)
        return
    try:
        st = Path(full).stat()
    except OSError:
        return
    if stat.S_ISREG(st.st_mode):
        listing.files[rel] = key_of(st) if is_page(rel) else None


def _inside(path: str, root: Path) -> bool:
    try:
        return Path(os.path.realpath(path)).is_relative_to(root)
    except OSError:
        return False
