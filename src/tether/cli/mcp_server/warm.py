"""What the MCP server keeps between calls, so a call costs its own work, not a cold start.

An agent CLI keeps one server for a whole session and calls it hundreds of
times; ``bench/mcp.py`` times a call over one session against a bare SDK server.
A cold call re-read the configuration, re-opened the wiki index and walked every
page to see what changed, and surveyed every process from scratch. The server
keeps instead:

- the configuration (:func:`tether.config.loader.keep_loaded`): read again only
  when a file, the environment or the folder changes;
- one open wiki index per worker thread and index file, brought up to date
  through the process's folder watch (``Index.update(watch=True)``), reopened
  when the file is replaced;
- this thread's connection to ``tether.db``, once the file exists;
- one ``Surveyor`` for ``subagents_list`` (a process is read once; the scan for
  agents seen but not counted runs at its own pace), used by one call at a time.

Nothing here changes what a call answers: each call still brings the index up to
date and surveys the processes anew.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tether.cli.wiki_context import WikiContext
from tether.wiki.index import Index, default_index_path

_local = threading.local()
_survey_lock = threading.Lock()
_surveyor: dict[tuple[Any, ...], Any] = {}


def start() -> None:
    """Switch the process to keeping what it loads (called when the server starts)."""
    from tether.config.loader import keep_loaded

    keep_loaded()


def _inode(path: str) -> int | None:
    try:
        return Path(path).stat().st_ino
    except OSError:
        return None


@contextmanager
def fresh_index(ctx: WikiContext) -> Iterator[Index]:
    """The wiki's index, up to date with the files; kept open for this thread's next call."""
    kept: dict[tuple[str, int], tuple[Index, int | None]] = _local.__dict__.setdefault(
        "indexes", {}
    )
    path = str(default_index_path(ctx.home, ctx.wiki))
    key = (path, ctx.settings.max_page_bytes)
    found = kept.get(key)
    if found is not None and found[1] == _inode(path):
        index = found[0]
    else:
        if found is not None:
            found[0].close()
        index = ctx.index()
        kept[key] = (index, _inode(path))
    try:
        index.update(watch=True)
    except (sqlite3.Error, OSError):
        kept.pop(key, None)
        index.close()
        raise
    yield index


@contextmanager
def store(home: Path) -> Iterator[sqlite3.Connection]:
    """The project's ``tether.db`` (``connect_existing``), kept open for this thread's next
    call once it exists on disk (an empty one in memory is opened anew each time)."""
    from tether.store import state_db

    kept: dict[str, sqlite3.Connection] = _local.__dict__.setdefault("stores", {})
    conn = kept.get(str(home))
    if conn is None or _inode(str(state_db.db_path(home))) is None:
        if conn is not None:
            conn.close()
            del kept[str(home)]
        conn = state_db.connect_existing(home)
        if _inode(str(state_db.db_path(home))) is None:
            try:
                yield conn
            finally:
                conn.close()
            return
        kept[str(home)] = conn
    yield conn


def look_at_subagents(config: Any, conn: sqlite3.Connection) -> Any:
    """One survey of the subagents by the server's own ``Surveyor``."""
    import msgspec

    from tether.config.schema import WatchSettings
    from tether.watch.survey import Surveyor

    settings = config.section("watch", WatchSettings)
    key = (str(config.home), msgspec.json.encode(settings))
    with _survey_lock:
        surveyor = _surveyor.get(key)
        if surveyor is None:
            for old in _surveyor.values():
                old.close()
            _surveyor.clear()
            surveyor = _surveyor[key] = Surveyor(settings, config.home)
        return surveyor.look(conn, time.time())
