"""The brief's word vectors: wordllama's model, read from its wheel without its code.

``tether.wiki.semantic`` reads wordllama's token table and tokenizer itself
(wordllama's import is slow and configures logging). These tests hold it to
wordllama's own output, bit for bit, and check that a brief never imports
wordllama's package.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from tether.core.errors import TetherError
from tether.wiki import semantic

TEXTS = [
    "Sync your notes across devices",
    "How do I keep my phone and my desktop in step?",
    "",
    "!!!",
    "Übersicht der Einstellungen für Plugins — und ein sehr langer Satz, " * 12,
    "Đồng bộ ghi chú giữa các thiết bị",
    "x",
    *(f"page {n}: a heading, a description and the opening words" for n in range(70)),
]


def _wordllama_vectors(texts: list[str]) -> np.ndarray:
    from wordllama import WordLlama  # type: ignore[import-untyped]

    model = WordLlama.load(cache_dir=semantic.wheel_folder(), disable_download=True, dim=256)
    raw = np.asarray(model.embed(texts), dtype=np.float32)
    norms = np.linalg.norm(raw, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    unit: np.ndarray = raw / norms
    return unit


@pytest.mark.slow
def test_the_vectors_equal_wordllamas_own_bit_for_bit() -> None:
    theirs = _wordllama_vectors(TEXTS)
    # a few texts convert only their own token rows; many convert the whole table once
    semantic._model.cache_clear()
    singles = np.concatenate([semantic.embed([text]) for text in TEXTS[:8]])
    assert np.array_equal(singles, theirs[:8])
    ours = semantic.embed(TEXTS)
    assert ours.shape == theirs.shape == (len(TEXTS), semantic.DIM)
    assert ours.dtype == np.float32
    assert np.array_equal(ours, theirs)
    assert not ours[2].any()  # an empty text: a zero row, not NaN
    assert np.isclose(np.linalg.norm(ours[0]), 1.0)


def test_a_question_close_in_meaning_is_closer_than_an_unrelated_one() -> None:
    page, paraphrase, unrelated = semantic.embed(
        [
            "Sync your notes across devices",
            "keep my phone and desktop notes the same",
            "Change the colour of a heading with a CSS snippet",
        ]
    )
    assert float(page @ paraphrase) > float(page @ unrelated)


def test_embedding_never_imports_wordllamas_package() -> None:
    code = (
        "import json, sys\n"
        "from tether.wiki import semantic\n"
        "semantic.embed(['sync between phone and desktop'])\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in"
        " ('wordllama', 'pydantic', 'requests'))))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert json.loads(done.stdout) == []


def test_a_missing_wheel_file_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(semantic, "TOKENIZER_FILE", ("tokenizers", "no-such-tokenizer.json"))
    semantic._model.cache_clear()
    try:
        with pytest.raises(TetherError, match=r"no-such-tokenizer\.json is not there"):
            semantic.embed(["anything"])
    finally:
        semantic._model.cache_clear()
