"""Page vectors in the index file, per embedding model, kept by a digest of the page's text.

The brief compares a question with pages by vectors from more than one model
(static word vectors over the whole wiki, a sentence model over the
candidates, or a user's embeddings endpoint). Each model's vectors live in the
index's ``vectors`` table under the model's name, each with the hash of the
page's bytes it was computed from (``files.hash``, which the update keeps) and
the version of ``page_text`` and ``page_passages`` (``TEXT_VERSION``): a page
whose file did not change is never embedded again, finding the pages to embed is one query (no
page text is built to compare), and a model change never mixes vectors of two
models.

Two ways to fill it:

- ``sync``: every page (the whole-wiki signals). The first brief after an
  index update embeds the pages whose text changed and drops those that are
  gone, then notes the index generation it matched, so later briefs check
  nothing. Each batch is committed as it comes, so work done before a failure
  (an endpoint that went away) is kept.
- ``ensure``: only the pages asked for (a model too slow for the whole wiki
  scores a brief's candidates; what it embedded once is kept).

A model whose ``passages`` is true (the sentence model) reads a page as
several texts (``page_passages``: what the page is about, then its sections in
pieces) and keeps one row per passage in the page's vector; a question's
similarity to that page is the mean of its similarity to the whole (the first
row) and to the best passage (``cosines``). A page that answers the question in
one section of many then scores by that section, not only by its opening.

Within a process, a synced model's matrix is kept per index file and generation.
"""

from __future__ import annotations

import json
import re
import sqlite3
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from tether.wiki.page import sections

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from tether.wiki.index_store import ProgressFn

BODY_WORDS = 60  # the start of a page's text that goes into its vector
# A passage holds at most this many words of a section (with the page's title and the
# section's heading it fits the sentence model's 128 tokens), and a page at most this
# many passages, its whole first: a long page costs no more than this many texts.
PASSAGE_WORDS = 80
MAX_PASSAGES = 16
# Part of every stored vector's digest: change it when ``page_text`` or
# ``page_passages`` changes, and every page is embedded again.
TEXT_VERSION = "t1"
_WORDS = re.compile(r"[^\W\d_][\w'-]*")
_META_PREFIX = "vectors_generation:"
_CHUNK = 500  # paths per SQL statement
_lock = threading.Lock()
# (index file, model) -> (generation, paths, path -> row, matrix)
_cache: dict[tuple[str, str], tuple[int, list[str], dict[str, int], Any]] = {}


class Embedder(Protocol):
    """A model that turns texts into unit-length vectors."""

    @property
    def name(self) -> str:
        """The model's name: its vectors are kept under it."""

    @property
    def batch(self) -> int:
        """How many pages' texts one call to ``embed`` should get at most."""

    @property
    def passages(self) -> bool:
        """Whether a page is read as its ``page_passages`` (one row each) rather than as
        its ``page_text`` alone; only a model that scores candidates (``cosines``), not the
        whole wiki (``nearest`` wants one row per page)."""

    def embed(self, texts: list[str]) -> NDArray[np.float32]:
        """One unit-length row per text (an empty text may give a zero row)."""


def page_text(
    title: str, aliases: list[str], description: str, headings: list[str], body: str = ""
) -> str:
    """What a page is about: its names, description, headings and the start of its text."""
    opening = " ".join(_WORDS.findall(body)[:BODY_WORDS])
    parts = [title, *aliases, description, *headings, opening]
    return ". ".join(p.strip() for p in parts if p and p.strip())


def page_passages(
    title: str, aliases: list[str], description: str, headings: list[str], body: str = ""
) -> list[str]:
    """A page as passages: its ``page_text`` first, then each section in pieces of
    ``PASSAGE_WORDS`` words under the page's title and the section's heading; at most
    ``MAX_PASSAGES`` in all."""
    out = [page_text(title, aliases, description, headings, body)]
    for heading, text in sections(body):
        words = _WORDS.findall(text)
        named = [title] if heading is None or heading == title else [title, heading]
        for start in range(0, max(len(words), 1), PASSAGE_WORDS):
            piece = " ".join(words[start : start + PASSAGE_WORDS])
            if piece or heading is not None:
                out.append(". ".join(p for p in [*named, piece] if p))
            if len(out) >= MAX_PASSAGES:
                return out
    return out


@dataclass(frozen=True)
class PageVectors:
    """A page's stored vector by one model: one row, or one per passage (the whole page's
    first) for a model that reads passages."""

    rows: NDArray[np.float32]  # (passages, the model's dimensions)

    def similarity(self, question: NDArray[np.float32]) -> float:
        """The cosine similarity to the ``question`` vector: with passages, the mean of the
        whole page's and the best passage's."""
        found = self.rows @ question
        return float(found[0] + found.max()) / 2


def _generation(conn: sqlite3.Connection) -> int:
    row = conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
    return int(row[0]) if row else 0


_TEXT_QUERY = (
    "SELECT p.path, p.title, p.aliases, p.description, p.headings, f.body FROM pages p"
    " JOIN fts f ON f.rowid = p.rowid"
)


def _texts(
    conn: sqlite3.Connection, paths: Sequence[str] | None, passages: bool
) -> dict[str, list[str]]:
    """path -> its texts for ``paths`` (None: every page): ``page_passages`` with
    ``passages``, else ``page_text`` alone."""
    if paths is None:
        found = conn.execute(_TEXT_QUERY).fetchall()
    else:
        found = []
        for start in range(0, len(paths), _CHUNK):
            chunk = paths[start : start + _CHUNK]
            marks = ",".join("?" * len(chunk))
            found += conn.execute(f"{_TEXT_QUERY} WHERE p.path IN ({marks})", chunk).fetchall()
    read = page_passages if passages else _one_text
    return {
        path: read(title, json.loads(aliases), description, json.loads(headings), body)
        for path, title, aliases, description, headings, body in found
    }


def _one_text(
    title: str, aliases: list[str], description: str, headings: list[str], body: str
) -> list[str]:
    return [page_text(title, aliases, description, headings, body)]


_STALE_QUERY = (
    "SELECT p.path, ? || hex(f.hash) FROM pages p JOIN files f ON f.path = p.path"
    " LEFT JOIN vectors v ON v.path = p.path AND v.model = ?"
    " WHERE v.digest IS NOT ? || hex(f.hash)"
)


def _stale(conn: sqlite3.Connection, model: str, paths: Sequence[str] | None) -> dict[str, str]:
    """path -> digest of the pages (of ``paths``; None: every page) whose vector by
    ``model`` is missing or was computed from other bytes or another ``page_text``."""
    prefix = TEXT_VERSION + ":"
    if paths is None:
        return dict(conn.execute(_STALE_QUERY, (prefix, model, prefix)).fetchall())
    out: dict[str, str] = {}
    for start in range(0, len(paths), _CHUNK):
        chunk = paths[start : start + _CHUNK]
        marks = ",".join("?" * len(chunk))
        out.update(
            conn.execute(
                f"{_STALE_QUERY} AND p.path IN ({marks})",
                [prefix, model, prefix, *chunk],
            ).fetchall()
        )
    return out


def _embed_and_store(
    conn: sqlite3.Connection,
    embedder: Embedder,
    stale: dict[str, str],
    progress: ProgressFn | None = None,
) -> None:
    """Embed the pages of ``stale`` (path -> digest) in batches, each committed as soon as
    it is done (``progress`` is told the pages done and the total after each).

    Texts of about the same length go together (a model that pads a batch to its
    longest text then wastes little). A page's rows (one per text) are kept as one
    vector."""
    texts = _texts(conn, sorted(stale), embedder.passages)
    paths = sorted(texts, key=lambda p: sum(len(t) for t in texts[p]))
    for start in range(0, len(paths), embedder.batch):
        chunk = paths[start : start + embedder.batch]
        vectors = embedder.embed([t for p in chunk for t in texts[p]])
        rows, at = [], 0
        for p in chunk:
            rows.append((p, embedder.name, stale[p], vectors[at : at + len(texts[p])].tobytes()))
            at += len(texts[p])
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?)", rows)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        if progress is not None:
            progress(start + len(chunk), len(paths))


def sync(conn: sqlite3.Connection, embedder: Embedder) -> int:
    """Every page's vector by ``embedder`` up to date; returns the generation they match.

    (``ensure`` with no paths embeds the same pages, and can report progress.)"""
    now = _generation(conn)
    key = _META_PREFIX + embedder.name
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    if row is not None and int(row[0]) == now:
        return now
    _embed_and_store(conn, embedder, _stale(conn, embedder.name, None))
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute(
            "DELETE FROM vectors WHERE model = ? AND path NOT IN (SELECT path FROM pages)",
            (embedder.name,),
        )
        if _generation(conn) == now:  # nobody updated the index meanwhile
            conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, str(now)))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return now


def ensure(
    conn: sqlite3.Connection,
    embedder: Embedder,
    paths: Iterable[str] | None,
    progress: ProgressFn | None = None,
) -> int:
    """The vectors by ``embedder`` of ``paths`` (None: every page) up to date, and only
    theirs; returns how many pages it embedded."""
    stale = _stale(conn, embedder.name, None if paths is None else sorted(set(paths)))
    if stale:
        _embed_and_store(conn, embedder, stale, progress)
    return len(stale)


def load(
    conn: sqlite3.Connection, model: str, paths: Iterable[str], dim: int
) -> dict[str, PageVectors]:
    """path -> stored vector by ``model`` of ``paths`` (those it has, in rows of ``dim``
    values; a vector of another width is left out)."""
    import numpy as np

    wanted = list(paths)
    out: dict[str, PageVectors] = {}
    for start in range(0, len(wanted), _CHUNK):
        chunk = wanted[start : start + _CHUNK]
        marks = ",".join("?" * len(chunk))
        for path, blob in conn.execute(
            f"SELECT path, vec FROM vectors WHERE model = ? AND path IN ({marks})",  # noqa: S608
            [model, *chunk],
        ):
            values = np.frombuffer(blob, dtype=np.float32)
            if dim > 0 and values.size and values.size % dim == 0:
                out[path] = PageVectors(values.reshape(-1, dim))
    return out


def matrix(
    conn: sqlite3.Connection, key: str, embedder: Embedder
) -> tuple[list[str], dict[str, int], Any]:
    """(paths, path -> row, the vectors) of every page by ``embedder``, synced first; kept
    per index file, model and generation."""
    import numpy as np

    now = sync(conn, embedder)
    with _lock:
        cached = _cache.get((key, embedder.name))
        if cached is None or cached[0] != now:
            rows = conn.execute(
                "SELECT path, vec FROM vectors WHERE model = ? ORDER BY path", (embedder.name,)
            ).fetchall()
            width = len(rows[0][1]) // 4 if rows else 0
            vectors = (
                np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(-1, width)
                if rows
                else np.zeros((0, 0), dtype=np.float32)
            )
            paths = [r[0] for r in rows]
            cached = (now, paths, {p: i for i, p in enumerate(paths)}, vectors)
            _cache[(key, embedder.name)] = cached
    return cached[1], cached[2], cached[3]


def nearest(
    conn: sqlite3.Connection,
    key: str,
    embedder: Embedder,
    question: NDArray[np.float32],
    limit: int,
    also: Iterable[str] = (),
) -> dict[str, float]:
    """How close each page is to the ``question`` vector, 0..1: the ``limit`` closest pages
    of the whole wiki, and ``also``.

    A page's value is how far its cosine similarity lies above the wiki's mean,
    relative to the closest page (0 at or below the mean).
    """
    import numpy as np

    paths, where, vectors = matrix(conn, key, embedder)
    if not paths or vectors.shape[1] != question.shape[0]:
        return {}
    # einsum's own loop, not BLAS: a threaded BLAS spins against a busy machine for one
    # matrix-vector product that takes a millisecond on one core
    raw = np.einsum("ij,j->i", vectors, question)
    mean = float(raw.mean())
    top = float(raw.max())
    if top <= mean:
        return {}
    norm = np.clip((raw - mean) / (top - mean), 0.0, None)
    k = min(limit, len(paths))
    closest: list[int] = np.argpartition(-norm, k - 1)[:k].tolist() if k > 0 else []
    out = {paths[i]: float(norm[i]) for i in closest}
    for path in also:
        row = where.get(path)
        if row is not None:
            out[path] = float(norm[row])
    return out


def cosines(
    conn: sqlite3.Connection,
    embedder: Embedder,
    question: NDArray[np.float32],
    paths: Iterable[str],
) -> dict[str, float]:
    """The cosine similarity of the ``question`` vector and each of ``paths`` by
    ``embedder`` (``PageVectors.similarity``: by passages, the mean of the whole page's
    and the best passage's), embedding those not embedded yet (or changed) first."""
    wanted = list(paths)
    ensure(conn, embedder, wanted)
    stored = load(conn, embedder.name, wanted, question.shape[0])
    return {path: vectors.similarity(question) for path, vectors in stored.items()}
