"""A page as passages for the sentence model, and how a page of passages is scored.

The sentence model reads a page as its summary (``page_text``) and then its
sections in pieces; a question's similarity to the page is the mean of its
similarity to the summary and to the best passage, so a page that answers in
its fifth section is found by that section. The model is faked here (a vector
per word); the real model's part is in ``test_sentence_model.py``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from tether.wiki import vectors
from tether.wiki.index import Index
from tether.wiki.layout import Wiki
from tether.wiki.page import sections

BODY = """Intro words before any heading.

## Open it

Press the keys.

```
## not a heading: code
```

## Close it
"""


def test_sections_cut_the_body_at_its_headings_and_leave_code_out() -> None:
    assert sections(BODY) == [
        (None, "Intro words before any heading."),
        ("Open it", "Press the keys."),
        ("Close it", ""),
    ]


def test_passages_are_the_summary_then_each_section_under_title_and_heading() -> None:
    passages = vectors.page_passages("Switcher", ["Jump"], "Find notes.", ["Open it"], BODY)
    assert passages[0] == vectors.page_text("Switcher", ["Jump"], "Find notes.", ["Open it"], BODY)
    assert passages[1:] == [
        "Switcher. Intro words before any heading",
        "Switcher. Open it. Press the keys",
        "Switcher. Close it",
    ]


def test_a_long_section_is_cut_in_pieces_and_a_long_page_at_the_cap() -> None:
    words = " ".join(f"w{i}x" for i in range(vectors.PASSAGE_WORDS + 5))
    one = vectors.page_passages("T", [], "", ["S"], f"## S\n{words}\n")
    assert [len(p.split()) for p in one[1:]] == [1 + 1 + vectors.PASSAGE_WORDS, 1 + 1 + 5]
    many = "".join(f"## H{i}\ntext {i}\n" for i in range(3 * vectors.MAX_PASSAGES))
    assert len(vectors.page_passages("T", [], "", [], many)) == vectors.MAX_PASSAGES


class _WordModel:
    """A fake passage model: a text's vector is the unit sum of its words' axes."""

    name = "fake-words-passages"
    batch = 2
    passages = True
    axes = ("keys", "press", "open", "switcher", "close", "intro", "colour")

    def embed(self, texts: list[str]) -> NDArray[np.float32]:
        out = np.zeros((len(texts), len(self.axes)), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().replace(".", " ").split():
                if word in self.axes:
                    out[row, self.axes.index(word)] += 1.0
            norm = float(np.linalg.norm(out[row]))
            if norm > 0:
                out[row] /= norm
        return out


def test_a_page_is_scored_by_its_summary_and_its_best_passage(
    tmp_path: Path, tether_home: Path
) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    (root / "Switcher.md").write_text(
        "# Switcher\n\n" + "Intro words.\n\n" * 3 + "## Open it\n\nPress the keys.\n",
        encoding="utf-8",
    )
    (root / "Colour.md").write_text("# Colour\n\nIntro colour words.\n", encoding="utf-8")
    model = _WordModel()
    question = model.embed(["press keys"])[0]
    with Index.open(Wiki.open(root), tether_home) as index:
        index.update()
        found = index.cosines(model, question, ["Switcher.md", "Colour.md"])
        stored = vectors.load(index.conn, model.name, ["Switcher.md"], len(model.axes))
        rows = stored["Switcher.md"].rows
        # one stored vector per page, one row per passage
        count = "SELECT count(*) FROM vectors WHERE model = ?"
        assert index.conn.execute(count, (model.name,)).fetchone()[0] == 2
        summary, best = float(rows[0] @ question), float((rows @ question).max())
        assert best > summary
        assert found["Switcher.md"] == (summary + best) / 2
        assert found["Colour.md"] == 0.0
        # a vector of another width is no vector of this model's
        assert vectors.load(index.conn, model.name, ["Switcher.md"], 5) == {}


def test_a_one_row_vector_scores_its_cosine() -> None:
    row = np.array([[0.6, 0.8]], dtype=np.float32)
    question = np.array([1.0, 0.0], dtype=np.float32)
    assert vectors.PageVectors(row).similarity(question) == float(np.float32(0.6))
