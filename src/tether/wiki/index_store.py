"""Bringing the stored index in line with what a look at the files found.

A page is read again when it is new, when its change key (mtime, ctime, size,
inode) differs from the stored one, when the caller knows it was touched (a
watch named it), or when its stored key is *racy*. The change time cannot be
set by hand, so an edit that restores size and mtime (``touch -d``, ``cp -p``)
still changes the key; an editor's save by rename changes the inode. What the
key cannot show is a second edit within the same timestamp tick as the read
(file systems stamp with a coarse clock: a few milliseconds on ext4, up to two
seconds on FAT). So a page whose change time is less than ``RACY_NS`` before
it was read is stored without a key (racy), and is read again by every later
look until it has aged (as git does with the entries of its index).

Reading again costs a read and a hash, not a parse: a page whose bytes hash as
before only gets its new key (and nothing is written while it stays racy). A
changed page is parsed and its links resolved again; only when paths come or
go, or a changed page's id or aliases change, are all pages' ids and links
recomputed (a new page can resolve links written elsewhere).

A page larger than the size cap (``max_bytes``; its size comes from the change
key, so it is never read) is not parsed: it is stored in ``files`` by its path
and key and listed in ``skipped``, so it is not looked at again until it
changes, and ``wiki index`` and ``wiki check`` can name it.

Every update that writes sets a new random ``meta.generation`` inside its
transaction (random, so that a rebuilt index never repeats an old one).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from tether.wiki.index_schema import MAX_PAGE_BYTES, TOO_LARGE, kind_marks, page_values
from tether.wiki.layout import Wiki, assign_ids
from tether.wiki.links import Resolver
from tether.wiki.scan import StatKey, ctime_of, size_of

RACY_NS = 2_000_000_000
ProgressFn = Callable[[int, int], None]


# Per stored path: the page's change key; None for a file that is not a page, and for a
# page whose key is racy (it never equals a key, so the page is read again).
Stored = dict[str, StatKey | None]


@dataclass
class Plan:
    read: list[tuple[str, StatKey]] = field(default_factory=list)  # pages to read
    added: list[str] = field(default_factory=list)  # new files that are not pages
    removed: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.read or self.added or self.removed)


def generation(conn: sqlite3.Connection) -> int:
    row = conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
    return int(row[0]) if row else 0


def snapshot(conn: sqlite3.Connection) -> tuple[int, Stored]:
    """The generation and every stored file, read in one transaction (they agree)."""
    conn.execute("BEGIN")
    try:
        gen = generation(conn)
        stored: Stored = dict(conn.execute("SELECT path, key FROM files"))
    finally:
        conn.execute("COMMIT")
    return gen, stored


def stored_some(conn: sqlite3.Connection, paths: Iterable[str]) -> Stored:
    wanted = list(paths)
    out: Stored = {}
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        marks = ",".join("?" * len(chunk))
        out.update(conn.execute(f"SELECT path, key FROM files WHERE path IN ({marks})", chunk))  # noqa: S608
    return out


def stored_under(conn: sqlite3.Connection, folder: str) -> list[str]:
    """Stored paths inside ``folder`` (relative to the page folder), at any depth."""
    # '0' sorts right after '/': the range is exactly the paths starting with "folder/"
    return [
        r[0]
        for r in conn.execute(
            "SELECT path FROM files WHERE path >= ? AND path < ?", (f"{folder}/", f"{folder}0")
        )
    ]


def plan(
    found: Mapping[str, StatKey | None],
    gone: Iterable[str],
    stored: Stored,
    touched: Collection[str] = (),
) -> Plan:
    """What to do for the files looked at (``found``) and the paths seen gone."""
    out = Plan()
    missing = object()
    for path, key in found.items():
        if key is None:
            if path not in stored:
                out.added.append(path)
        elif stored.get(path, missing) != key or path in touched:
            out.read.append((path, key))
    out.removed = sorted({p for p in gone if p in stored})
    return out


@dataclass(frozen=True)
class Applied:
    parsed: int  # pages parsed and stored
    removed: int
    generation: int  # the index generation after the update
    changed: bool = False  # pages or files came, went or changed (not only keys renewed)


class _Old(NamedTuple):
    """What is stored for a path about to be read."""

    hash: bytes | None
    key: StatKey | None
    is_page: bool  # a pages row exists
    declared_id: str | None
    aliases: str | None
    id: str | None
    skipped: bool = False  # listed in skipped (too large)


def apply(
    conn: sqlite3.Connection,
    wiki: Wiki,
    todo: Plan,
    expected: int,
    progress: ProgressFn | None = None,
    max_bytes: int = MAX_PAGE_BYTES,
) -> Applied | None:
    """Carry out ``todo``; ``None`` when another process wrote since generation
    ``expected`` was read (then nothing is written).

    Pages with stored bytes are hashed first, without a lock: if nothing but
    racy keys was to be checked and the bytes are the same, nothing is written.
    A page over ``max_bytes`` is never read (see the module's doc).
    """
    if not todo:
        return Applied(0, 0, expected)
    work = _sort(conn, wiki, todo, max_bytes)
    if not (work.parse or work.rekey or work.large or todo.added or todo.removed):
        return Applied(0, 0, expected)
    conn.execute("BEGIN IMMEDIATE")
    try:
        if generation(conn) != expected:
            conn.execute("ROLLBACK")
            return None
        conn.executemany("UPDATE files SET key = ? WHERE path = ?", work.rekey)
        parsed = _write(conn, wiki, todo, work, progress)
        new = int.from_bytes(os.urandom(7), "big") + 1
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('generation', ?)", (str(new),))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    changed = bool(work.parse or work.large or todo.added or todo.removed)
    return Applied(parsed, len(todo.removed), new, changed)


@dataclass
class _Work:
    """The pages of a plan, sorted by what their update needs."""

    old: dict[str, _Old]  # what the index holds of each
    rekey: list[tuple[StatKey | None, str]] = field(default_factory=list)  # same bytes
    parse: list[tuple[str, StatKey | None]] = field(default_factory=list)  # read and store
    large: list[tuple[str, StatKey | None, int]] = field(default_factory=list)  # over the cap


def _sort(conn: sqlite3.Connection, wiki: Wiki, todo: Plan, max_bytes: int) -> _Work:
    """Which pages to read again, which only get a new key, which are too large;
    pages with stored bytes are hashed here, without a lock."""
    work = _Work(_before(conn, [path for path, _ in todo.read]))
    # Taken before any file is read: "changed less than RACY_NS before its read" errs on racy.
    now = time.time_ns()
    for path, key in todo.read:
        # a racy key is stored as NULL: it equals no key, so the page is read next time
        keep = None if ctime_of(key) >= now - RACY_NS else key
        stored = work.old.get(path)
        size = size_of(key)
        if size > max_bytes:
            if stored is None or not stored.skipped or stored.key != keep:
                work.large.append((path, keep, size))
            continue
        if stored is not None and stored.is_page and stored.hash is not None:
            try:
                same = _digest((wiki.pages_dir / path).read_bytes()) == stored.hash
            except OSError:
                same = False
            if same:
                if keep != stored.key:
                    work.rekey.append((keep, path))
                continue
        work.parse.append((path, keep))
    return work


def _digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


def _write(
    conn: sqlite3.Connection, wiki: Wiki, todo: Plan, work: _Work, progress: ProgressFn | None
) -> int:
    """Inside the transaction: forget, parse and store, then resolve links again."""
    old, parse = work.old, work.parse
    structural = bool(todo.removed or todo.added)
    for path in todo.removed:
        _forget(conn, path)
    for path, keep, size in work.large:
        stored = old.get(path)
        if stored is None or stored.is_page:
            structural = True  # a page leaves the graph (or a new path arrives)
        _forget(conn, path)
        conn.execute("INSERT INTO files VALUES (?, ?, NULL)", (path, keep))
        conn.execute("INSERT INTO skipped VALUES (?, ?, ?)", (path, size, TOO_LARGE))
    reparsed: list[str] = []
    kept_ids: dict[str, str] = {}
    for done, (path, keep) in enumerate(parse, 1):
        stored = old.get(path)
        try:
            data = (wiki.pages_dir / path).read_bytes()
        except OSError:  # gone since it was looked at
            structural = structural or stored is not None
            _forget(conn, path)
            continue
        identity = _store(conn, wiki, path, data)
        conn.execute("INSERT OR REPLACE INTO files VALUES (?, ?, ?)", (path, keep, _digest(data)))
        reparsed.append(path)
        if stored is None or not stored.is_page or (stored.declared_id, stored.aliases) != identity:
            structural = True
        elif stored.id is not None:
            kept_ids[path] = stored.id
        if progress is not None and (done % 200 == 0 or done == len(parse)):
            progress(done, len(parse))
    conn.executemany("INSERT OR REPLACE INTO files(path) VALUES (?)", [(p,) for p in todo.added])
    if structural:
        relink_all(conn)
    elif reparsed:
        _relink_some(conn, reparsed, kept_ids)
    return len(reparsed)


def _before(conn: sqlite3.Connection, paths: list[str]) -> dict[str, _Old]:
    out: dict[str, _Old] = {}
    for start in range(0, len(paths), 500):
        chunk = paths[start : start + 500]
        marks = ",".join("?" * len(chunk))
        for row in conn.execute(
            "SELECT f.path, f.hash, f.key, p.path IS NOT NULL, p.declared_id, p.aliases, p.id,"  # noqa: S608
            " s.path IS NOT NULL FROM files f LEFT JOIN pages p ON p.path = f.path"
            f" LEFT JOIN skipped s ON s.path = f.path WHERE f.path IN ({marks})",
            chunk,
        ):
            out[row[0]] = _Old(row[1], row[2], bool(row[3]), row[4], row[5], row[6], bool(row[7]))
    return out


def _forget(conn: sqlite3.Connection, path: str) -> None:
    row = conn.execute("SELECT rowid FROM pages WHERE path = ?", (path,)).fetchone()
    if row is not None:
        conn.execute("DELETE FROM fts WHERE rowid = ?", (row[0],))
        conn.execute("DELETE FROM pages WHERE rowid = ?", (row[0],))
    conn.execute("DELETE FROM files WHERE path = ?", (path,))
    conn.execute("DELETE FROM skipped WHERE path = ?", (path,))
    conn.execute("DELETE FROM vectors WHERE path = ?", (path,))


def _store(conn: sqlite3.Connection, wiki: Wiki, path: str, data: bytes) -> tuple[Any, str]:
    """Parse one page and store it; returns its (declared id, aliases JSON)."""
    from tether.wiki.page import parse_page

    page = parse_page(path, data.decode("utf-8", "replace"))
    conn.execute("DELETE FROM skipped WHERE path = ?", (path,))  # it may have shrunk
    row = conn.execute("SELECT rowid FROM pages WHERE path = ?", (path,)).fetchone()
    if row is not None:
        conn.execute("DELETE FROM fts WHERE rowid = ?", (row[0],))
        conn.execute("DELETE FROM pages WHERE rowid = ?", (row[0],))
    values = page_values(page, wiki.tether_layout)
    cur = conn.execute(
        "INSERT INTO pages(path, declared_id, title, kind, description, aliases, sources,"
        " updated, links, facts, headings, block_ids, problems, body_line, words)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        values,
    )
    conn.execute(
        "INSERT INTO fts(rowid, title, aliases, description, headings, body, kinds)"
        " VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            cur.lastrowid,
            page.title,
            " ".join(page.aliases),
            page.description,
            " ".join(page.headings),
            page.body,
            kind_marks(values[3], path),  # values[3]: the kind page_values settled
        ),
    )
    return values[1], values[5]


def relink_all(conn: sqlite3.Connection) -> None:
    """Recompute every page id and the whole resolved link graph."""
    rows = conn.execute("SELECT path, declared_id, aliases, links FROM pages").fetchall()
    ids = assign_ids([(r[0], r[1]) for r in rows])
    conn.executemany("UPDATE pages SET id = ? WHERE path = ?", [(i, p) for p, i in ids.items()])
    resolver = _resolver(conn, [(r[0], r[2]) for r in rows])
    conn.execute("DELETE FROM edges")
    conn.executemany("INSERT INTO edges VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", _edges(resolver, rows))


def _relink_some(conn: sqlite3.Connection, paths: list[str], ids: Mapping[str, str]) -> None:
    """Links of re-parsed pages whose id and aliases stayed (and no path came or went):
    no other page's id or link resolution can have changed."""
    conn.executemany("UPDATE pages SET id = ? WHERE path = ?", [(ids[p], p) for p in paths])
    resolver = _resolver(conn, conn.execute("SELECT path, aliases FROM pages").fetchall())
    rows = []
    for start in range(0, len(paths), 500):
        chunk = paths[start : start + 500]
        marks = ",".join("?" * len(chunk))
        conn.execute(f"DELETE FROM edges WHERE src IN ({marks})", chunk)  # noqa: S608
        rows.extend(
            conn.execute(
                f"SELECT path, declared_id, aliases, links FROM pages WHERE path IN ({marks})",  # noqa: S608
                chunk,
            ).fetchall()
        )
    conn.executemany("INSERT INTO edges VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", _edges(resolver, rows))


def _resolver(conn: sqlite3.Connection, aliases: Iterable[tuple[str, str]]) -> Resolver:
    files = [r[0] for r in conn.execute("SELECT path FROM files")]
    return Resolver(files, [(p, a) for p, al in aliases for a in json.loads(al)])


def _edges(resolver: Resolver, rows: Iterable[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    for path, _, _, links in rows:
        for target, line, kind, heading, _text, rel_type, raw in json.loads(links):
            found = resolver.resolve(target, path)
            out.append(
                (
                    path,
                    line,
                    kind,
                    rel_type,
                    target,
                    heading,
                    raw,
                    found.path if found else None,
                    found.how if found else None,
                )
            )
    return out
