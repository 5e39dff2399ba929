"""Is the index up to date? A walk of every file, or a watch that names what changed.

Every command that reads the index first makes sure it matches the files.
The portable way is the *walk*: list every folder, ``stat`` every page, and
compare with the stored change keys (``tether.wiki.index_store`` says what a key can
and cannot show, and how racy keys are handled). It is the only honest check
for a process that starts fresh: nothing observed the files before it started,
and an edit in place changes nothing but the page's own inode — not its
folder — so no stored watermark can stand in for looking at every page.

A process that updates the same index again and again (a library user, a
long-running tool) keeps a *tracker*: Linux inotify on every folder and every
page, each set up by a walk before the folder is listed or the page stat-ed.
From then on an update drains the events (one non-blocking ``read`` when
nothing happened) and looks only at the paths they name, plus the symlinked
files (a watch cannot vouch for a symlink's target). The walk is done again
whenever the watch cannot be trusted: the event queue overflowed, a watched
folder went away, the index was written by another process or connection
since (its ``generation`` moved), the process forked, the kernel's watch limit
was reached, or the file system is not local.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from contextlib import nullcontext
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tether.wiki import index_store
from tether.wiki.index_schema import MAX_PAGE_BYTES, UpdateStats
from tether.wiki.layout import Wiki
from tether.wiki.scan import Listing, look, walk

if TYPE_CHECKING:
    from tether import fswatch

USE_INOTIFY = True  # off: every update walks (the path a fresh process takes)
_MAX_TRACKERS = 4  # inotify instances are a per-user kernel resource (often 128)


class Tracker:
    """A watch over one wiki's page tree, for one index file."""

    def __init__(self, pages_dir: str) -> None:
        self.pages_dir = pages_dir
        self.lock = threading.Lock()
        self.watch: fswatch.FolderWatch | None = None
        self.generation: int | None = None  # the index generation the watch vouches for
        self.unwatched: set[str] = set()
        self.failed = False  # watching is not exact here: always walk

    def pending(self, generation: int) -> set[str] | None:
        """The paths the events name, or ``None`` when everything must be walked."""
        watch = self.watch
        if watch is None or not watch.usable or self.generation != generation:
            return None
        drained = watch.drain()
        if not drained.exact:
            return None
        cut = len(self.pages_dir) + 1
        return {name[cut:] for name in drained.names}

    def restart(self) -> fswatch.FolderWatch | None:
        """A new watch before a walk (events of the old one no longer matter)."""
        self.close()
        if self.failed:
            return None
        from tether.fswatch import FolderWatch  # ctypes: only where a watch is wanted

        self.watch = FolderWatch.start(self.pages_dir)
        if self.watch is None:
            self.failed = True
        return self.watch

    def settle(self, generation: int, listing: Listing) -> None:
        """After a walk: trust the watch from ``generation`` on, if it saw every folder."""
        if self.watch is None:
            return
        if not listing.watched:  # e.g. the kernel's watch limit, or a network mount inside
            self.close()
            self.failed = True
            return
        self.generation = generation
        self.unwatched = set(listing.unwatched)

    def close(self) -> None:
        if self.watch is not None:
            self.watch.close()
            self.watch = None
        self.generation = None


_TRACKERS: dict[tuple[str, str], Tracker] = {}
_TRACKERS_LOCK = threading.Lock()


def tracker_for(index_path: str, pages_dir: str) -> Tracker:
    """The process-wide tracker of an index file and page folder (most recent kept)."""
    key = (index_path, pages_dir)
    with _TRACKERS_LOCK:
        tracker = _TRACKERS.pop(key, None)
        if tracker is None:
            tracker = Tracker(pages_dir)
            while len(_TRACKERS) >= _MAX_TRACKERS:
                _TRACKERS.pop(next(iter(_TRACKERS))).close()
        _TRACKERS[key] = tracker
        return tracker


@dataclass(frozen=True)
class Asked:
    """What an update of the index is asked for."""

    progress: index_store.ProgressFn | None = None  # told (done, of) while pages are read
    escaped: list[str] | None = None  # symlinks that leave the page folder go here (a walk)
    watch: bool = True  # keep a folder watch in this process for the next update
    max_bytes: int = MAX_PAGE_BYTES  # pages over it are not read (tether.wiki.index_store)


def refresh(
    conn: sqlite3.Connection, wiki: Wiki, index_path: str, asked: Asked = Asked()
) -> UpdateStats:
    """Bring the index up to date with the files (see the module's doc)."""
    t0 = time.perf_counter()
    tracker = None
    if asked.watch and USE_INOTIFY and asked.escaped is None:
        tracker = tracker_for(index_path, str(wiki.pages_dir))
    with tracker.lock if tracker is not None else nullcontext():
        if tracker is not None:
            quick = _by_events(conn, wiki, tracker, asked, t0)
            if quick is not None:
                return quick
        return _by_walk(conn, wiki, tracker, asked, t0)


def _by_walk(
    conn: sqlite3.Connection, wiki: Wiki, tracker: Tracker | None, asked: Asked, t0: float
) -> UpdateStats:
    watch = tracker.restart() if tracker is not None else None
    listing = Listing()
    walk(wiki, listing, watch=watch)
    while True:  # again only when another process wrote between the snapshot and the write
        gen, stored = index_store.snapshot(conn)
        todo = index_store.plan(listing.files, stored.keys() - listing.files.keys(), stored)
        done = index_store.apply(conn, wiki, todo, gen, asked.progress, asked.max_bytes)
        if done is not None:
            break
    if tracker is not None:
        tracker.settle(done.generation, listing)
    if asked.escaped is not None:
        asked.escaped.extend(listing.escaped)
    return _stats(conn, done, True, t0, len(listing.files))


def _by_events(
    conn: sqlite3.Connection, wiki: Wiki, tracker: Tracker, asked: Asked, t0: float
) -> UpdateStats | None:
    """An update from the watch's events; ``None`` when a walk is needed instead."""
    gen = index_store.generation(conn)
    touched = tracker.pending(gen)
    if touched is None:
        return None
    assert tracker.watch is not None
    looked = touched | tracker.unwatched
    listing = Listing()
    gone: list[str] = []
    for path in looked:
        seen = look(wiki, path, tracker.watch)
        if not seen.watched:
            return None
        if seen.unwatched:
            listing.unwatched.add(path)
        if seen.taken:
            listing.files[path] = seen.key
            continue
        # gone, or a folder: what was stored under it goes unless it is found again
        inside = index_store.stored_under(conn, path)
        if seen.folder:
            walk(wiki, listing, start=path, watch=tracker.watch)
        gone.append(path)
        gone.extend(p for p in inside if p not in listing.files)
    if not listing.watched:
        return None
    stored = index_store.stored_some(conn, [*listing.files, *gone])
    todo = index_store.plan(listing.files, gone, stored, touched=touched)
    done = index_store.apply(conn, wiki, todo, gen, asked.progress, asked.max_bytes)
    if done is None:
        return None
    tracker.generation = done.generation
    tracker.unwatched = (tracker.unwatched - looked) | listing.unwatched
    return _stats(conn, done, False, t0)


def _stats(
    conn: sqlite3.Connection,
    done: index_store.Applied,
    walked: bool,
    t0: float,
    files: int | None = None,
) -> UpdateStats:
    if files is None:
        files = int(conn.execute("SELECT count(*) FROM files").fetchone()[0])
    pages = int(conn.execute("SELECT count(*) FROM pages").fetchone()[0])
    seconds = time.perf_counter() - t0
    return UpdateStats(files, pages, done.parsed, done.removed, seconds, done.changed, walked)
