"""How ``fused_hits`` weighs its three signals, with fake models on a real index.

A page that holds none of the question's words is the page the vector signals
are there for: its score is their weighted sum, not discounted for what bm25
could not see (bm25's share is already 0 for it). The models are faked (a
vector per word, two words meaning the same); the real ones are measured by
``bench/wiki_eval.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest
from numpy.typing import NDArray

from tether.room.brief import NEAREST_SHARE, SENTENCE_SHARE, Signals, fused_hits
from tether.wiki.index import Index
from tether.wiki.layout import Wiki


class _SynonymModel:
    """A fake model: a text's vector is the unit sum of its words' axes, and "widget" and
    "gizmo" share one axis (the same thing in other words)."""

    batch = 4
    axes: ClassVar[dict[str, int]] = {"widget": 0, "gizmo": 0, "stuff": 1, "other": 2}

    def __init__(self, name: str, passages: bool) -> None:
        self.name = name
        self.passages = passages

    def embed(self, texts: list[str]) -> NDArray[np.float32]:
        out = np.zeros((len(texts), 3), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().replace(".", " ").split():
                if word in self.axes:
                    out[row, self.axes[word]] += 1.0
            norm = float(np.linalg.norm(out[row]))
            if norm > 0:
                out[row] /= norm
        return out


def _signals() -> Signals:
    return Signals(_SynonymModel("fake-nearest", False), _SynonymModel("fake-sentence", True))


def test_a_page_without_the_question_words_scores_the_vectors_in_full(
    tmp_path: Path, tether_home: Path
) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    files = {
        "Alpha.md": "# Alpha\n\nA widget, and stuff, other stuff and other things.\n",
        "Beta.md": "# Beta\n\nThe gizmo. A gizmo again.\n",
        "Gamma.md": "# Gamma\n\nNothing here is alike.\n",
    }
    for name, text in files.items():
        (root / name).write_text(text, encoding="utf-8")
    with Index.open(Wiki.open(root), tether_home) as index:
        index.update()
        hits, worded = fused_hits(index, "widget", _signals())
    scores = {h.page.path: h.score for h in hits}
    assert worded == {"Alpha.md"}  # bm25 finds only the page with the word
    # Beta is the nearest page and the most similar candidate (n = s = 1), with no bm25
    assert scores["Beta.md"] == pytest.approx(NEAREST_SHARE + SENTENCE_SHARE)
    assert [h.page.path for h in hits][:2] == ["Beta.md", "Alpha.md"]
