"""The brief's second signal: static word embeddings, offline.

A question in the user's own words ("sync between phone and desktop") often
shares no word with the page that answers it ("Sync your notes across
devices"); bm25 cannot see that, word vectors can. The vectors come from
``wordllama`` (pinned in pyproject), whose wheel ships both its weights and
its tokenizer: the model is loaded from the installed package folder with
downloads disabled, so nothing is ever fetched.

A page's vector embeds its title, aliases, description and headings (what a
page is about, not every word it mentions). Vectors live in the index's
``vectors`` table with a digest of that text: after an index update the first
brief embeds only the pages whose text changed (and drops those that are
gone), then notes the index generation it matched, so later briefs check
nothing. Within a process the matrix is kept per index file and generation.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
import threading
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

DIM = 256
BODY_WORDS = 60  # the start of a page's text that goes into its vector
_WORDS = re.compile(r"[^\W\d_][\w'-]*")
META_KEY = "vectors_generation"
_BATCH = 512
_lock = threading.Lock()
_cache: dict[str, tuple[int, list[str], dict[str, int], Any]] = {}


@lru_cache(maxsize=1)
def _model() -> Any:
    """The WordLlama model from its own wheel (weights and tokenizer), never downloaded."""
    import wordllama  # type: ignore[import-untyped]
    from wordllama import WordLlama

    folder = Path(wordllama.__file__).resolve().parent
    return WordLlama.load(cache_dir=folder, disable_download=True, dim=DIM)


def embed(texts: list[str]) -> NDArray[np.float32]:
    """Unit-length vectors, one row per text (an empty text gives a zero row)."""
    import numpy as np

    if not texts:
        return np.zeros((0, DIM), dtype=np.float32)
    vectors = np.asarray(_model().embed(texts), dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    unit: NDArray[np.float32] = vectors / norms
    return unit


def page_text(
    title: str, aliases: list[str], description: str, headings: list[str], body: str = ""
) -> str:
    """What a page is about: its names, description, headings and the start of its text."""
    opening = " ".join(_WORDS.findall(body)[:BODY_WORDS])
    parts = [title, *aliases, description, *headings, opening]
    return ". ".join(p.strip() for p in parts if p and p.strip())


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=12).hexdigest()


def _generation(conn: sqlite3.Connection) -> int:
    row = conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
    return int(row[0]) if row else 0


def sync(conn: sqlite3.Connection) -> int:
    """Bring the vectors up to the index's pages; returns the generation they match."""
    import json

    now = _generation(conn)
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (META_KEY,)).fetchone()
    if row is not None and int(row[0]) == now:
        return now
    pages = conn.execute(
        "SELECT p.path, p.title, p.aliases, p.description, p.headings, f.body FROM pages p"
        " JOIN fts f ON f.rowid = p.rowid"
    ).fetchall()
    stored = dict(conn.execute("SELECT path, digest FROM vectors").fetchall())
    texts: dict[str, str] = {}
    for path, title, aliases, description, headings, body in pages:
        text = page_text(title, json.loads(aliases), description, json.loads(headings), body)
        if stored.get(path) != _digest(text):
            texts[path] = text
    gone = set(stored) - {p[0] for p in pages}
    paths = list(texts)
    rows: list[tuple[str, str, bytes]] = []
    for start in range(0, len(paths), _BATCH):
        chunk = paths[start : start + _BATCH]
        vectors = embed([texts[p] for p in chunk])
        rows += [(p, _digest(texts[p]), v.tobytes()) for p, v in zip(chunk, vectors, strict=True)]
    conn.execute("BEGIN IMMEDIATE")
    try:
        if _generation(conn) == now:  # nobody updated the index meanwhile
            conn.executemany("DELETE FROM vectors WHERE path = ?", [(p,) for p in gone])
            conn.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)", rows)
            conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (META_KEY, str(now)))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return now


def _matrix(conn: sqlite3.Connection, key: str) -> tuple[list[str], dict[str, int], Any]:
    """(paths, path -> row, the vectors), kept per index file and generation."""
    import numpy as np

    now = sync(conn)
    with _lock:
        cached = _cache.get(key)
        if cached is None or cached[0] != now:
            rows = conn.execute("SELECT path, vec FROM vectors ORDER BY path").fetchall()
            matrix = (
                np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(-1, DIM)
                if rows
                else np.zeros((0, DIM), dtype=np.float32)
            )
            paths = [r[0] for r in rows]
            cached = (now, paths, {p: i for i, p in enumerate(paths)}, matrix)
            _cache[key] = cached
    return cached[1], cached[2], cached[3]


def similar(
    conn: sqlite3.Connection, key: str, question: str, limit: int, also: Iterable[str] = ()
) -> dict[str, float]:
    """How close each page is to ``question``, 0..1: the ``limit`` closest pages and ``also``.

    A page's value is how far its cosine similarity lies above the wiki's mean,
    relative to the closest page (0 at or below the mean).
    """
    import numpy as np

    paths, where, matrix = _matrix(conn, key)
    if not paths:
        return {}
    # einsum's own loop, not BLAS: a threaded BLAS spins against a busy machine for one
    # matrix-vector product that takes a millisecond on one core
    raw = np.einsum("ij,j->i", matrix, embed([question])[0])
    mean = float(raw.mean())
    top = float(raw.max())
    if top <= mean:
        return {}
    norm = np.clip((raw - mean) / (top - mean), 0.0, None)
    k = min(limit, len(paths))
    nearest: list[int] = np.argpartition(-norm, k - 1)[:k].tolist() if k > 0 else []
    out = {paths[i]: float(norm[i]) for i in nearest}
    for path in also:
        index = where.get(path)
        if index is not None:
            out[path] = float(norm[index])
    return out
