"""What the wiki index stores: its SQLite schema and the rows read back from it.

``files`` lists every file of the page folder: attachments count only by their
path (links resolve to them), pages also by their change key (modification
and change time, size, inode, packed; NULL while racy, see
``tether.wiki.index_store``) and a hash of their bytes. ``pages`` and ``fts`` hold each
page's parse and text, ``edges`` the links with their resolved target. The
``generation`` in ``meta`` is a new random number after every update that
wrote anything, so a process can tell that someone wrote since it last looked.
``vectors`` holds page vectors for the brief, per embedding model
(``tether.wiki.vectors``, filled by briefs or ``wiki index --vectors``, never by
an update).
``skipped`` lists the pages that are not indexed and why (a page over the size
cap, ``MAX_PAGE_BYTES`` unless ``[wiki] max_page_bytes`` says otherwise); such a
page counts in ``files`` by its path and change key only.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tether.wiki.page import Fact, Problem

if TYPE_CHECKING:
    from tether.wiki.page import Page

SCHEMA_VERSION = "5"
# Pages larger than this are not read into the index (``[wiki] max_page_bytes``).
MAX_PAGE_BYTES = 4 * 1024 * 1024
TOO_LARGE = "over the size cap"

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files(path TEXT PRIMARY KEY, key BLOB, hash BLOB);
CREATE TABLE IF NOT EXISTS pages(
    rowid INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, id TEXT NOT NULL DEFAULT '',
    declared_id TEXT, title TEXT NOT NULL, kind TEXT, description TEXT NOT NULL,
    aliases TEXT NOT NULL, sources TEXT NOT NULL, updated TEXT, links TEXT NOT NULL,
    facts TEXT NOT NULL, headings TEXT NOT NULL, block_ids TEXT NOT NULL,
    problems TEXT NOT NULL, body_line INTEGER NOT NULL, words INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS pages_id ON pages(id COLLATE NOCASE);
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(title, aliases, description, headings, body,
    kinds, tokenize = 'porter unicode61 remove_diacritics 2');
CREATE TABLE IF NOT EXISTS edges(src TEXT NOT NULL, line INTEGER NOT NULL, kind TEXT NOT NULL,
    rel_type TEXT NOT NULL, target TEXT NOT NULL, heading TEXT, raw TEXT NOT NULL,
    dst TEXT, how TEXT);
CREATE INDEX IF NOT EXISTS edges_src ON edges(src);
CREATE INDEX IF NOT EXISTS edges_dst ON edges(dst);
CREATE TABLE IF NOT EXISTS skipped(path TEXT PRIMARY KEY, size INTEGER NOT NULL,
    reason TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS vectors(path TEXT NOT NULL, model TEXT NOT NULL, digest TEXT NOT NULL,
    vec BLOB NOT NULL, PRIMARY KEY (path, model));
"""
TABLES = ("meta", "files", "pages", "fts", "edges", "skipped", "vectors")

# The ``kinds`` column of ``fts`` holds a marker word per kind a page has (its ``kind``
# and, for a page under ``<kind>s/``, that folder's), so a search for one kind
# intersects with the few pages of that kind inside FTS5 rather than ranking every
# page first; its bm25 weight is 0, so it never moves a score. The prefix keeps the
# marker apart from every word a question has.
KIND_MARK = "tetherkind"


def kind_mark(kind: str) -> str | None:
    """The marker word for ``kind`` (None: no letter or digit in it)."""
    word = re.sub(r"[^0-9a-z]+", "", kind.lower())
    return KIND_MARK + word if word else None


def page_kinds(kind: str | None, path: str) -> list[str]:
    """The kinds a page has: its ``kind``, and ``K`` for a page under ``Ks/``."""
    kinds = [kind] if kind else []
    folder = path.split("/", 1)[0] if "/" in path else ""
    if folder.endswith("s"):
        kinds.append(folder[:-1])
    return kinds


def kind_marks(kind: str | None, path: str) -> str:
    """The ``kinds`` text of a page: the marker of each kind it has."""
    marks = {m for m in map(kind_mark, page_kinds(kind, path)) if m}
    return " ".join(sorted(marks))


# The columns of a PageRow, in order.
COLS = "path, id, title, kind, description, aliases, sources, updated"


@dataclass(frozen=True)
class UpdateStats:
    files: int
    pages: int
    parsed: int
    removed: int
    seconds: float
    changed: bool
    walked: bool = True  # every file was looked at (False: a folder watch named what to check)


@dataclass(frozen=True)
class SkippedPage:
    """A page the index does not hold, and why."""

    path: str  # relative to the page folder
    size: int
    reason: str


@dataclass(frozen=True)
class PageRow:
    path: str
    id: str
    title: str
    kind: str | None
    description: str
    aliases: tuple[str, ...]
    sources: tuple[str, ...]
    updated: str | None


@dataclass(frozen=True)
class Hit:
    page: PageRow
    score: float  # higher is better (negated bm25)


@dataclass(frozen=True)
class PageDetails:
    """The stored parse of one page beyond its row: what the checks read."""

    declared_id: str | None  # the front matter's ``id``, as written
    facts: tuple[Fact, ...]
    headings: tuple[str, ...]
    block_ids: tuple[str, ...]
    problems: tuple[Problem, ...]
    body_line: int  # the file line the body starts on (1-based)
    words: int


# The columns of a PageDetails, in order.
DETAIL_COLS = "declared_id, facts, headings, block_ids, problems, body_line, words"


def page_details(r: Sequence[Any]) -> PageDetails:
    """A PageDetails from the ``DETAIL_COLS`` of a ``pages`` row."""
    return PageDetails(
        declared_id=r[0],
        facts=tuple(Fact(f[0], f[1], f[2], tuple(f[3])) for f in json.loads(r[1])),
        headings=tuple(json.loads(r[2])),
        block_ids=tuple(json.loads(r[3])),
        problems=tuple(Problem(line, message) for line, message in json.loads(r[4])),
        body_line=r[5],
        words=r[6],
    )


@dataclass
class Edge:
    src: str
    line: int
    kind: str
    rel_type: str
    target: str
    heading: str | None
    raw: str
    dst: str | None
    how: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def describe_size(size: int) -> str:
    """A byte count as people read it: ``512 bytes``, ``3.2 KiB``, ``73.0 MiB``."""
    if size < 1024:
        return f"{size} bytes"
    value = size / 1024
    unit = "KiB"
    for bigger in ("MiB", "GiB"):
        if value < 1024:
            break
        value /= 1024
        unit = bigger
    return f"{value:.1f} {unit}"


def page_row(r: Sequence[Any]) -> PageRow:
    """A PageRow from the ``COLS`` of a ``pages`` row."""
    return PageRow(
        path=r[0],
        id=r[1],
        title=r[2],
        kind=r[3],
        description=r[4],
        aliases=tuple(json.loads(r[5])),
        sources=tuple(json.loads(r[6])),
        updated=r[7],
    )


def page_values(page: Page, kind_from_folder: bool) -> tuple[Any, ...]:
    """The ``pages`` columns after ``rowid``, ``id`` for one parsed page."""
    kind = page.kind
    if kind is None and kind_from_folder and "/" in page.path:
        folder = page.path.split("/", 1)[0]
        kind = folder[:-1] if folder.endswith("s") else folder
    links = [
        (ln.target, ln.line, ln.kind, ln.heading, ln.text, ln.rel_type, ln.raw) for ln in page.links
    ]
    facts = [(f.line, f.text, f.category, list(f.sources)) for f in page.facts]
    problems = [(p.line, p.message) for p in page.problems]
    return (
        page.path,
        page.declared_id,
        page.title,
        kind,
        page.description,
        json.dumps(list(page.aliases)),
        json.dumps(list(page.sources)),
        page.updated,
        json.dumps(links),
        json.dumps(facts),
        json.dumps(page.headings),
        json.dumps(page.block_ids),
        json.dumps(problems),
        page.body_line,
        len(page.body.split()),
    )
