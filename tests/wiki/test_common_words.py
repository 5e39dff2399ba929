"""Words at least half the pages hold: bm25 weighs them at nothing, so the brief's
search leaves them out of the ranked query (``Index.search(common=False)``).

These tests pin what that may and may not change on a real index: the pages the
other words find and their order stay; pages only a common word finds leave the
ranking; a page that common words title is still found; and the questions whose
every word is common are told apart, with the pages their words find still
countable cheaply (the room's "read directly" rule needs them).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tether.wiki.index import Index
from tether.wiki.layout import Wiki
from tether.wiki.word_search import is_common

# six pages: "release" in four of them (common), "rollback" in two, "canary" in one
PAGES = {
    "canary.md": "# Canary\n\nA canary release goes to a few hosts first.",
    "rollback.md": "# Rollback\n\nUndo a release with a rollback; rollback is quick.",
    "train.md": "# Train\n\nThe release train leaves every week.",
    "notes.md": "# Notes\n\nRelease notes list what changed; a rollback is noted too.",
    "hosts.md": "# Hosts\n\nThe hosts are listed by region.",
    "release.md": "# Release\n\nHow the team ships.",
}


@pytest.fixture
def index(tmp_path: Path, tether_home: Path) -> Index:
    root = tmp_path / "kb"
    (root / "raw").mkdir(parents=True)
    for name, body in PAGES.items():
        file = root / "wiki" / name
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(f"---\nsources: [raw/s.md]\n---\n{body}\n", encoding="utf-8")
    ix = Index.open(Wiki.open(root), tether_home)
    ix.update(watch=False)
    return ix


def test_a_word_in_half_the_pages_is_the_one_bm25_weighs_at_nothing() -> None:
    # FTS5's idf, log((N - n + 0.5) / (n + 0.5)), is <= 0 (clamped) exactly when 2n >= N
    assert is_common(3, 6) and is_common(6, 6) and is_common(1, 1)
    assert not is_common(2, 6) and not is_common(0, 6)


def test_common_words_leave_the_ranking_and_nothing_else_moves(index: Index) -> None:
    everything = {h.page.path: h.score for h in index.search("canary rollback release", 10)}
    telling = {
        h.page.path: h.score for h in index.search("canary rollback release", 10, common=False)
    }
    # "release" alone finds train.md; it leaves the ranking with the word
    assert {"train.md", "canary.md", "rollback.md", "notes.md"} <= set(everything)
    assert set(telling) == {"canary.md", "rollback.md", "notes.md"}
    # the pages the other words find keep their order, and their scores all but exactly
    # (the common word's share of a score is its clamped idf, 1e-6, times at most ~20)
    assert sorted(telling, key=lambda p: -telling[p]) == [
        p for p in sorted(everything, key=lambda p: -everything[p]) if p in telling
    ]
    for path, score in telling.items():
        assert score == pytest.approx(everything[path], abs=1e-4)


def test_a_page_titled_with_common_words_is_still_found(index: Index) -> None:
    # every word of the question is common: nothing is ranked by bm25, but the page
    # whose title holds the words is a candidate, as it is in the full search
    hits = index.search("release", 10, common=False)
    assert [h.page.path for h in hits] == ["release.md"]
    assert hits[0].page.path == index.search("release", 10)[0].page.path
    assert index.search("release", 10, kind="episode", common=False) == []


def test_questions_whose_every_word_is_common_are_told_apart(index: Index) -> None:
    assert index.only_common_words("the release")
    assert index.only_common_words("release xylophonequartz")  # a word no page holds
    assert not index.only_common_words("release rollback")
    assert not index.only_common_words("xylophonequartz")


def test_the_pages_a_common_word_finds_are_counted_cheaply(index: Index) -> None:
    found = index.found_by_words("release", 3)
    assert len(found) == 3
    assert found <= {"canary.md", "rollback.md", "train.md", "notes.md", "release.md"}
    assert index.found_by_words("canary", 3) == {"canary.md"}
    assert index.found_by_words("xylophonequartz", 3) == set()


def test_word_counts_follow_an_edit(index: Index, tmp_path: Path) -> None:
    assert index.search("hosts", 10, common=False) != []
    # "hosts" is in two pages of six; in a third, it becomes common
    (tmp_path / "kb" / "wiki" / "train.md").write_text(
        "---\nsources: [raw/s.md]\n---\n# Train\n\nThe release train visits the hosts.\n",
        encoding="utf-8",
    )
    index.update(watch=False)
    assert index.only_common_words("hosts")
    assert [h.page.path for h in index.search("hosts", 10, common=False)] == ["hosts.md"]
