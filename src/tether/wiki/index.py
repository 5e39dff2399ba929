"""The wiki index: one SQLite file with FTS5 (bm25), derived from the Markdown files.

The files are the truth; the index can be deleted at any time. ``update``
brings it up to date before it is read: it re-reads only pages that changed,
forgets removed ones, and resolves links again where that can matter
(``tether.wiki.freshness`` finds what changed, ``tether.wiki.index_store`` writes it,
``tether.wiki.index_schema`` has the schema). The index lives in
``$TETHER_HOME/wiki-index/`` (never inside the wiki, which may be read-only).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tether.core.errors import UsageError
from tether.wiki.freshness import Asked, refresh
from tether.wiki.index_schema import (
    COLS,
    DETAIL_COLS,
    MAX_PAGE_BYTES,
    SCHEMA,
    SCHEMA_VERSION,
    TABLES,
    Edge,
    Hit,
    PageDetails,
    PageRow,
    SkippedPage,
    UpdateStats,
    page_details,
    page_row,
)
from tether.wiki.index_store import ProgressFn, generation
from tether.wiki.layout import Wiki, clean_page_name, page_path_forms
from tether.wiki.links import Resolver
from tether.wiki.word_search import WordSearch, is_common

if TYPE_CHECKING:
    from tether.wiki.endpoint import Endpoint
    from tether.wiki.vectors import Embedder

_WORD = re.compile(r"\w+", re.UNICODE)
_STOP_TEXT = """a an and are as at be by can do does for from has have how i if in into is it its
    me my no not of on or our so that the their them then there these this to was we what when where
    which who why will with you your about after all also any but did get just more most other
    out over some than too up use used using very would should could"""
STOPWORDS = frozenset(_STOP_TEXT.split())


def default_index_path(home: Path, wiki: Wiki) -> Path:
    digest = hashlib.sha256(str(wiki.root).encode()).hexdigest()[:12]
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", wiki.root.name).strip("-") or "wiki"
    return Path(home) / "wiki-index" / f"{name}-{digest}.sqlite"


def query_terms(text: str) -> list[str]:
    """The search terms of a question: words, lower-cased, stop words and repeats left out."""
    seen: list[str] = []
    for word in _WORD.findall(text.lower()):
        if len(word) < 2 or word in STOPWORDS or word in seen:
            continue
        seen.append(word)
    return seen


class Index:
    """An open index of one wiki."""

    def __init__(
        self,
        wiki: Wiki,
        path: Path,
        max_page_bytes: int = MAX_PAGE_BYTES,
        endpoint: Endpoint | None = None,
    ) -> None:
        self.wiki = wiki
        self.path = path
        self.max_page_bytes = max_page_bytes
        # the user's embeddings endpoint ([wiki] embeddings), tried before the offline models
        self.endpoint = endpoint
        path.parent.mkdir(parents=True, exist_ok=True)
        self.conn = sqlite3.connect(path, timeout=10.0, isolation_level=None)
        self.conn.execute("PRAGMA busy_timeout = 10000")
        self.conn.execute("PRAGMA journal_mode = WAL")
        self.conn.execute("PRAGMA synchronous = NORMAL")
        self._resolver: tuple[int, Resolver] | None = None
        self._words = WordSearch(self.conn)
        self._ensure_schema()

    @classmethod
    def open(
        cls,
        wiki: Wiki,
        home: Path,
        path: Path | None = None,
        max_page_bytes: int = MAX_PAGE_BYTES,
        endpoint: Endpoint | None = None,
    ) -> Index:
        return cls(wiki, path or default_index_path(home, wiki), max_page_bytes, endpoint)

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _ensure_schema(self) -> None:
        row = None
        with contextlib.suppress(sqlite3.OperationalError):
            row = self.conn.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()
        if row is not None and row[0] != SCHEMA_VERSION:
            for table in TABLES:
                self.conn.execute(f"DROP TABLE IF EXISTS {table}")
            row = None
        self.conn.executescript(SCHEMA)
        if row is None:
            self.conn.execute(
                "INSERT OR REPLACE INTO meta VALUES ('version', ?), ('root', ?)",
                (SCHEMA_VERSION, str(self.wiki.root)),
            )

    # --- building ---------------------------------------------------------------

    def update(
        self,
        progress: ProgressFn | None = None,
        escaped: list[str] | None = None,
        watch: bool = True,
    ) -> UpdateStats:
        """Bring the index up to date with the files; re-read only what changed.

        ``watch`` keeps a folder watch in this process so that the next update
        needs no walk (worth it only for a process that updates again); with
        ``escaped``, symlinks that leave the page folder are listed there (and
        the files are walked). Pages larger than ``max_page_bytes`` are not read
        (``skipped`` lists them).
        """
        self._settle_cap()
        asked = Asked(progress, escaped, watch, self.max_page_bytes)
        return refresh(self.conn, self.wiki, str(self.path), asked)

    def _settle_cap(self) -> None:
        """When the size cap differs from the one the index was built with, every page
        is looked at again (by size first: one over the cap is still not read)."""
        row = self.conn.execute("SELECT value FROM meta WHERE key = 'max_page_bytes'").fetchone()
        if row is not None and int(row[0]) == self.max_page_bytes:
            return
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            self.conn.execute(
                "UPDATE files SET key = NULL WHERE path IN (SELECT path FROM pages)"
                " OR path IN (SELECT path FROM skipped)"
            )
            self.conn.execute(
                "INSERT OR REPLACE INTO meta VALUES ('max_page_bytes', ?)",
                (str(self.max_page_bytes),),
            )
            new = int.from_bytes(os.urandom(7), "big") + 1
            self.conn.execute("INSERT OR REPLACE INTO meta VALUES ('generation', ?)", (str(new),))
            self.conn.execute("COMMIT")
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise

    def skipped(self) -> list[SkippedPage]:
        """Pages the index does not hold (too large), by path."""
        return [
            SkippedPage(path, size, reason)
            for path, size, reason in self.conn.execute(
                "SELECT path, size, reason FROM skipped ORDER BY path"
            )
        ]

    # --- reading ----------------------------------------------------------------

    def resolver(self) -> Resolver:
        """Link resolution over the indexed files (kept while the index is unchanged)."""
        gen = generation(self.conn)
        if self._resolver is not None and self._resolver[0] == gen:
            return self._resolver[1]
        files = [r[0] for r in self.conn.execute("SELECT path FROM files")]
        aliases = [
            (p, a)
            for p, al in self.conn.execute("SELECT path, aliases FROM pages")
            for a in json.loads(al)
        ]
        resolver = Resolver(files, aliases)
        self._resolver = (gen, resolver)
        return resolver

    def pages(self) -> list[PageRow]:
        return [page_row(r) for r in self.conn.execute(f"SELECT {COLS} FROM pages ORDER BY path")]  # noqa: S608

    def page_count(self) -> int:
        return int(self.conn.execute("SELECT count(*) FROM pages").fetchone()[0])

    def by_path(self, path: str) -> PageRow | None:
        r = self.conn.execute(f"SELECT {COLS} FROM pages WHERE path = ?", (path,)).fetchone()  # noqa: S608
        return page_row(r) if r else None

    def by_paths(self, paths: Iterable[str]) -> dict[str, PageRow]:
        wanted = list(paths)
        out: dict[str, PageRow] = {}
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for r in self.conn.execute(f"SELECT {COLS} FROM pages WHERE path IN ({marks})", chunk):  # noqa: S608
                out[r[0]] = page_row(r)
        return out

    def find(self, name: str) -> PageRow | None:
        """A page by any name a user, a stale list or a citation gives it.

        In order: the page id; a path relative to the page folder or to the wiki
        root (``concepts/x``, ``wiki/concepts/x.md``; ``.md`` optional); link
        resolution (file name, alias, path suffix); the title. ``[[Page|text]]``
        names ``Page``. A path that is absolute or climbs out of the page folder
        is no path form, and only indexed pages are ever found. Every command
        that takes a page name goes through here (``wiki read``, ``wiki stale``,
        ``wiki check``, ``room brief``).
        """
        name = clean_page_name(name)
        if not name:
            return None
        r = self.conn.execute(
            f"SELECT {COLS} FROM pages WHERE id = ? COLLATE NOCASE",  # noqa: S608 - constant columns
            (name,),
        ).fetchone()
        if r is not None:
            return page_row(r)
        forms = page_path_forms(name, self.wiki.prefix)
        for form in forms:
            for candidate in (form, form + ".md"):
                found = self.by_path(candidate)
                if found is not None:
                    return found
        resolver = self.resolver()
        for form in forms or [name]:
            hit = resolver.resolve(form)
            if hit is not None:
                row = self.by_path(hit.path)
                if row is not None:
                    return row
        r = self.conn.execute(
            f"SELECT {COLS} FROM pages WHERE title = ? COLLATE NOCASE",  # noqa: S608 - constant columns
            (name,),
        ).fetchone()
        return page_row(r) if r else None

    def find_many(self, names: Iterable[str]) -> dict[str, PageRow | None]:
        """``find`` for many names at once (a stale list)."""
        paths = self.find_paths(names)
        rows = self.by_paths(p for p in paths.values() if p is not None)
        return {name: rows.get(path) if path else None for name, path in paths.items()}

    def find_paths(self, names: Iterable[str]) -> dict[str, str | None]:
        """The page path ``find`` gives each name, ids and paths looked up in a few queries."""
        wanted = list(dict.fromkeys(names))
        clean = {name: clean_page_name(name) for name in wanted}
        by_id: dict[str, str] = {}
        ids = [c for c in clean.values() if c]
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for page_id, path in self.conn.execute(
                f"SELECT id, path FROM pages WHERE id COLLATE NOCASE IN ({marks})",  # noqa: S608
                chunk,
            ):
                by_id.setdefault(page_id.lower(), path)
        out: dict[str, str | None] = {}
        rest: dict[str, list[str]] = {}
        for name in wanted:
            if not clean[name]:
                out[name] = None
            elif clean[name].lower() in by_id:
                out[name] = by_id[clean[name].lower()]
            else:
                rest[name] = [
                    p for f in page_path_forms(name, self.wiki.prefix) for p in (f, f + ".md")
                ]
        known = self._existing_paths(p for candidates in rest.values() for p in candidates)
        for name, candidates in rest.items():
            path = next((p for p in candidates if p in known), None)
            if path is None:
                row = self.find(name)
                path = row.path if row is not None else None
            out[name] = path
        return out

    def _existing_paths(self, paths: Iterable[str]) -> set[str]:
        wanted = list(paths)
        out: set[str] = set()
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            marks = ",".join("?" * len(chunk))
            out.update(
                r[0]
                for r in self.conn.execute(
                    f"SELECT path FROM pages WHERE path IN ({marks})",  # noqa: S608
                    chunk,
                )
            )
        return out

    def search(
        self, question: str, limit: int = 20, kind: str | None = None, common: bool = True
    ) -> list[Hit]:
        """Pages for ``question``, best first: bm25, lifted by question words in the title
        (``tether.wiki.word_search``). ``common=False`` leaves the words at least half the
        pages hold out of the ranked query: bm25 gives them no weight, and ranking every
        page that holds one is what costs most on a large wiki."""
        try:
            return self._words.search(query_terms(question), limit, kind, common)
        except sqlite3.OperationalError as exc:
            raise UsageError(f"cannot search for {question!r}: {exc}") from exc

    def only_common_words(self, question: str) -> bool:
        """Whether the question has words the wiki holds and at least half of its pages
        hold every one of them (bm25 then weighs no page above another by their rarity)."""
        pages, held = self._words.holding(query_terms(question))
        found = [n for n in held.values() if n > 0]
        return bool(found) and all(is_common(n, pages) for n in found)

    def found_by_words(self, question: str, at_most: int) -> set[str]:
        """Up to ``at_most`` pages any word of the question finds (unranked, so cheap)."""
        rowids = self._words.found(query_terms(question), at_most)
        return {row.path for row in self._words.rows_by_rowid(rowids).values()}

    def nearest(
        self, embedder: Embedder, question: Any, limit: int, also: Iterable[str] = ()
    ) -> dict[str, float]:
        """The ``limit`` pages closest to the ``question`` vector by ``embedder``'s vectors of
        every page, and ``also``: 0..1 each (``tether.wiki.vectors.nearest``)."""
        from tether.wiki.vectors import nearest

        return nearest(self.conn, str(self.path), embedder, question, limit, also)

    def cosines(self, embedder: Embedder, question: Any, paths: Iterable[str]) -> dict[str, float]:
        """The cosine similarity of the ``question`` vector and each of ``paths`` by
        ``embedder`` (those not embedded yet are embedded now and kept)."""
        from tether.wiki.vectors import cosines

        return cosines(self.conn, embedder, question, paths)

    def edges_from(self, paths: Iterable[str]) -> list[Edge]:
        return self._edges("src", paths)

    def edges_to(self, paths: Iterable[str]) -> list[Edge]:
        return self._edges("dst", paths)

    def inbound_counts(self, paths: Iterable[str]) -> dict[str, int]:
        """How many other pages link to each of ``paths``."""
        wanted = list(paths)
        out: dict[str, int] = {}
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for dst, n in self.conn.execute(
                f"SELECT dst, count(DISTINCT src) FROM edges WHERE dst IN ({marks})"  # noqa: S608
                " AND src != dst GROUP BY dst",
                chunk,
            ):
                out[dst] = int(n)
        return out

    def all_edges(self) -> list[Edge]:
        return [Edge(*r) for r in self.conn.execute("SELECT * FROM edges ORDER BY src, line")]

    def _edges(self, column: str, paths: Iterable[str]) -> list[Edge]:
        wanted = list(paths)
        out: list[Edge] = []
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            marks = ",".join("?" * len(chunk))
            out.extend(
                Edge(*r)
                for r in self.conn.execute(
                    # column is "src" or "dst", marks only "?": no user text in the SQL
                    f"SELECT * FROM edges WHERE {column} IN ({marks}) ORDER BY src, line",  # noqa: S608
                    chunk,
                )
            )
        return out

    def details(self, path: str) -> PageDetails | None:
        """The stored parse of one page (None: the index holds no such page)."""
        r = self.conn.execute(
            f"SELECT {DETAIL_COLS} FROM pages WHERE path = ?",  # noqa: S608 - constant columns
            (path,),
        ).fetchone()
        return None if r is None else page_details(r)
