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

The weights and tokenizer are read straight from the wheel's files with
``safetensors`` and ``tokenizers`` (the two libraries wordllama itself loads
them with), and a text's vector is computed the way wordllama computes it: the
mean of its tokens' vectors. wordllama's own package is never imported: its
import pulls in pydantic and requests (about 0.2 s) and configures the root
logger, and its loader converts the whole 32,000-row table to float32 (about
0.1 s) where a question needs a dozen rows; every ``tether room brief`` and
``room open`` paid that (``bench/wiki.py``, column ``cli``). A test checks that
the vectors equal wordllama's own, bit for bit.
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

from tether.errors import TetherError

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


# The files of wordllama's wheel tether reads (the l2_supercat model, 256 dimensions).
WEIGHTS_FILE = ("weights", "l2_supercat_256.safetensors")
WEIGHTS_KEY = "embedding.weight"
TOKENIZER_FILE = ("tokenizers", "l2_supercat_tokenizer_config.json")
# Texts tokenized together (padded to the longest): wordllama's batch, so the sums
# run over the same shapes and the vectors come out the same.
_EMBED_BATCH = 64


class _WordVectors:
    """wordllama's token table (float16, as stored) and its tokenizer."""

    def __init__(self, table: NDArray[np.float16], tokenizer: Any) -> None:
        self.table = table
        self.tokenizer = tokenizer
        self._wide: NDArray[np.float32] | None = None

    def widen(self) -> None:
        """Convert the whole table to float32 once (about 0.1 s): worth it for many texts,
        whose padded token rows outnumber the table's."""
        import numpy as np

        if self._wide is None:
            self._wide = self.table.astype(np.float32)

    def rows(self, ids: NDArray[np.int32]) -> NDArray[np.float32]:
        """The float32 vectors of ``ids`` (the same values either way)."""
        import numpy as np

        if self._wide is not None:
            return self._wide[ids]
        gathered: NDArray[np.float32] = self.table[ids].astype(np.float32)
        return gathered


def wheel_folder() -> Path:
    """The installed wordllama package's folder, found without importing it."""
    from importlib.util import find_spec

    spec = find_spec("wordllama")
    if spec is None or not spec.submodule_search_locations:
        raise TetherError("wordllama is not installed (tether pins it): install tether again")
    return Path(next(iter(spec.submodule_search_locations)))


@lru_cache(maxsize=1)
def _model() -> _WordVectors:
    """The token table and tokenizer from wordllama's wheel, never downloaded."""
    from safetensors import safe_open
    from tokenizers import Tokenizer

    folder = wheel_folder()
    tokenizer_file, weights_file = folder.joinpath(*TOKENIZER_FILE), folder.joinpath(*WEIGHTS_FILE)
    for file in (tokenizer_file, weights_file):
        if not file.is_file():
            raise TetherError(
                f"the brief's word vectors are missing: {file} is not there "
                f"(a damaged install; install tether again)"
            )
    tokenizer = Tokenizer.from_file(str(tokenizer_file))
    tokenizer.enable_padding()
    tokenizer.no_truncation()
    with safe_open(str(weights_file), framework="np") as weights:
        table = weights.get_tensor(WEIGHTS_KEY)
    return _WordVectors(table, tokenizer)


def _mean_vectors(model: _WordVectors, texts: list[str]) -> NDArray[np.float32]:
    """Each text's mean token vector (a text with no token: zeros), as wordllama pools."""
    import numpy as np

    encoded = model.tokenizer.encode_batch(texts, add_special_tokens=False)
    ids = np.array([e.ids for e in encoded], dtype=np.int32)
    mask = np.array([e.attention_mask for e in encoded], dtype=np.float32)
    np.clip(ids, 0, model.table.shape[0] - 1, out=ids)
    tokens = model.rows(ids)
    counts = np.maximum(mask.sum(axis=1, keepdims=True), 1.0).astype(np.float32)
    pooled: NDArray[np.float32] = (
        np.sum(tokens * mask[..., np.newaxis], axis=1, dtype=np.float32) / counts
    )
    return pooled


def embed(texts: list[str]) -> NDArray[np.float32]:
    """Unit-length vectors, one row per text (an empty text gives a zero row)."""
    import numpy as np

    if not texts:
        return np.zeros((0, DIM), dtype=np.float32)
    model = _model()
    if len(texts) > _EMBED_BATCH:
        model.widen()
    vectors = np.concatenate(
        [
            _mean_vectors(model, texts[start : start + _EMBED_BATCH])
            for start in range(0, len(texts), _EMBED_BATCH)
        ]
    )
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
