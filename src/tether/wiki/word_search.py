"""bm25 over the index's FTS5 table: the pages a question's words find, best first.

``Index.search`` is the way in; this module holds the queries and what they keep
between calls of one index generation (which pages title a word, how many pages
hold a word).

A word that at least half of the pages hold gets no weight from bm25: FTS5's
idf, ``log((N - n + 0.5) / (n + 0.5))``, is zero or below for ``2n >= N`` and is
clamped to 1e-6. Ranking every page that holds such a word is what a search
costs most on a large wiki (one ``bm25()`` call per page), and the order it
gives among those pages is by word counts alone. The room brief therefore asks
with ``common=False``: the ranked query leaves those words out, and when every
word of the question is one of them, only the pages the question's words title
are ranked (the brief lets bm25 weigh the pages the other signals found).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Sequence

from tether.wiki.index_schema import COLS, Hit, PageRow, kind_mark, page_kinds, page_row
from tether.wiki.index_store import generation

# bm25 column weights: title, aliases, description, headings, body, kinds (markers only)
WEIGHTS = (10.0, 8.0, 4.0, 3.0, 1.0, 0.0)
TITLE_FLOOR = 2.0
_WEIGHTS_SQL = ", ".join(map(str, WEIGHTS))
_RANKED = f"SELECT rowid, bm25(fts, {_WEIGHTS_SQL}) AS r FROM fts WHERE fts MATCH ?"  # noqa: S608
# a title-cover lookup reads at most this many pages per word
_COVER_LIMIT = 500


def fts_phrase(term: str) -> str:
    """``term`` as an FTS5 string (quoted: no operator or column filter in it counts)."""
    return '"' + term.replace('"', '""') + '"'


def fts_query(terms: Sequence[str]) -> str:
    """Any of ``terms``, as an FTS5 query."""
    return " OR ".join(fts_phrase(t) for t in terms)


def is_common(holding: int, pages: int) -> bool:
    """Whether a word ``holding`` pages of ``pages`` hold is one bm25 gives no weight."""
    return holding > 0 and 2 * holding >= pages


class WordSearch:
    """The bm25 queries of one open index (``conn``); they raise ``sqlite3.OperationalError``
    when FTS5 refuses a query."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self._cover: tuple[tuple[tuple[str, ...], int], dict[int, int]] | None = None
        # generation -> (pages, word -> how many pages hold it)
        self._held: tuple[int, int, dict[str, int]] | None = None

    def search(
        self,
        terms: list[str],
        limit: int,
        kind: str | None = None,
        common: bool = True,
    ) -> list[Hit]:
        """Pages for ``terms``, best first: bm25, lifted by the terms in the title.

        bm25 gives a word that most pages contain almost no weight, so a page
        titled with the question's words ("Create a vault" for "create a new
        vault") could drown among pages that mention rarer words once. Each
        page's score is therefore ``bm25 * (1 + c) + 2 * c``, with ``c`` the share
        of the terms found in its title or aliases, and pages with ``c >= 0.5``
        are candidates even when bm25 alone would not rank them. With
        ``common=False`` the words at least half the pages hold are left out of the
        ranked query (they still count in ``c`` and in every score)."""
        if not terms:
            return []
        ranked_terms = terms if common else self.telling(terms)
        mark = None if kind is None else kind_mark(kind)
        if kind is not None and mark is None:
            return []
        scores: dict[int, float] = {}
        if ranked_terms:
            match = fts_query(ranked_terms)
            if mark is not None:
                match = f"({match}) AND {fts_phrase(mark)}"
            rows = self.conn.execute(_RANKED + " ORDER BY r LIMIT ?", [match, limit])
            scores = {rowid: -float(rank) for rowid, rank in rows}
        cover = self.title_cover(terms)
        extra = [rid for rid, n in cover.items() if rid not in scores and 2 * n >= len(terms)]
        scores.update(self.scores(terms, extra))
        return self._hits(terms, scores, cover, kind)[:limit]

    def scores(self, terms: list[str], rowids: Collection[int]) -> dict[int, float]:
        """bm25 of every one of ``rowids`` that ``terms`` find (higher is better)."""
        wanted = list(rowids)
        match = fts_query(terms)
        out: dict[int, float] = {}
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for rowid, rank in self.conn.execute(
                _RANKED + f" AND rowid IN ({marks})", [match, *chunk]
            ):
                out[rowid] = -float(rank)
        return out

    def _hits(
        self, terms: list[str], scores: dict[int, float], cover: dict[int, int], kind: str | None
    ) -> list[Hit]:
        rows = self.rows_by_rowid(list(scores))
        hits = []
        for rowid, row in rows.items():
            if kind is not None and kind not in page_kinds(row.kind, row.path):
                continue  # a marker two kinds share once reduced to letters and digits
            share = cover.get(rowid, 0) / len(terms)
            hits.append(Hit(row, scores[rowid] * (1 + share) + TITLE_FLOOR * share))
        hits.sort(key=lambda h: (-h.score, h.page.path))
        return hits

    def title_cover(self, terms: list[str]) -> dict[int, int]:
        """rowid -> how many of ``terms`` its title or aliases hold (at most 500 pages a term).

        Kept for the last terms and generation: a brief asks for the same terms twice
        (its matches, then its episodes)."""
        key = (tuple(terms), generation(self.conn))
        if self._cover is not None and self._cover[0] == key:
            return self._cover[1]
        cover: dict[int, int] = {}
        for term in terms:
            for (rowid,) in self.conn.execute(
                "SELECT rowid FROM fts WHERE fts MATCH ? LIMIT ?",
                ["{title aliases} : " + fts_query([term]), _COVER_LIMIT],
            ):
                cover[rowid] = cover.get(rowid, 0) + 1
        self._cover = (key, cover)
        return cover

    def holding(self, terms: list[str]) -> tuple[int, dict[str, int]]:
        """(how many pages, and how many of them hold each of ``terms``); counts are kept
        per generation of the index."""
        now = generation(self.conn)
        if self._held is None or self._held[0] != now:
            pages = int(self.conn.execute("SELECT count(*) FROM pages").fetchone()[0])
            self._held = (now, pages, {})
        _, pages, held = self._held
        for term in terms:
            if term not in held:
                held[term] = int(
                    self.conn.execute(
                        "SELECT count(*) FROM fts WHERE fts MATCH ?", [fts_phrase(term)]
                    ).fetchone()[0]
                )
        return pages, {t: held[t] for t in terms}

    def telling(self, terms: list[str]) -> list[str]:
        """The ``terms`` fewer than half the pages hold (those bm25 weighs)."""
        pages, held = self.holding(terms)
        return [t for t in terms if not is_common(held[t], pages)]

    def found(self, terms: list[str], at_most: int) -> list[int]:
        """Up to ``at_most`` rowids of pages any of ``terms`` finds (in no order: cheap)."""
        if not terms:
            return []
        return [
            rowid
            for (rowid,) in self.conn.execute(
                "SELECT rowid FROM fts WHERE fts MATCH ? LIMIT ?", [fts_query(terms), at_most]
            )
        ]

    def rows_by_rowid(self, rowids: list[int]) -> dict[int, PageRow]:
        out: dict[int, PageRow] = {}
        for start in range(0, len(rowids), 500):
            chunk = rowids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for r in self.conn.execute(
                f"SELECT {COLS}, rowid FROM pages WHERE rowid IN ({marks})",  # noqa: S608
                chunk,
            ):
                out[r[-1]] = page_row(r[:-1])
        return out
