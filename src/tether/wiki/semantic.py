"""The brief's whole-wiki vector signal: static word embeddings, offline.

A question in the user's own words ("sync between phone and desktop") often
shares no word with the page that answers it ("Sync your notes across
devices"); bm25 cannot see that, word vectors can. The vectors come from
``wordllama`` (pinned in pyproject), whose wheel ships both its weights and
its tokenizer: the model is loaded from the installed package folder with
downloads disabled, so nothing is ever fetched.

A page's vector embeds its title, aliases, description, headings and opening
(``tether.wiki.vectors.page_text``: what a page is about, not every word it
mentions); it is cheap enough for every page of a large wiki, so it finds the
candidates a question's words miss. Vectors are kept in the index
(``tether.wiki.vectors``).

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

from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tether.core.errors import TetherError

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

DIM = 256


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


class WordVectors:
    """wordllama's static word vectors as an ``Embedder`` (``tether.wiki.vectors``)."""

    name = "wordllama-l2_supercat-256"
    batch = 512
    passages = False  # one row per page: the whole wiki's matrix

    def embed(self, texts: list[str]) -> NDArray[np.float32]:
        return embed(texts)


WORD_VECTORS = WordVectors()
