"""A search narrowed to one kind of page (the brief's seed episodes).

The ``kinds`` column of the full-text index holds a marker per kind; these
tests pin what it must do: find exactly the pages of that kind (declared in the
front matter or given by a ``<kind>s/`` folder), follow edits, and never move
a score.
"""

from __future__ import annotations

from pathlib import Path

from tether.wiki.index import Index
from tether.wiki.layout import Wiki


def _page(root: Path, rel: str, body: str, kind: str | None = None) -> Path:
    file = root / "wiki" / rel
    file.parent.mkdir(parents=True, exist_ok=True)
    front = f"kind: {kind}\n" if kind else ""
    file.write_text(f"---\nsources: [raw/s.md]\n{front}---\n{body}\n", encoding="utf-8")
    return file


def _wiki(tmp_path: Path) -> Path:
    root = tmp_path / "kb"
    (root / "raw").mkdir(parents=True)
    _page(root, "episodes/rollout.md", "The rollout of the deploy train went wrong.")
    _page(root, "concepts/postmortem.md", "A deploy postmortem, told as it happened.", "episode")
    _page(root, "concepts/words.md", "An episode about the deploy, in passing.")
    _page(root, "concepts/train.md", "Deploy, deploy, deploy: the deploy train.")
    return root


def test_a_kind_search_finds_exactly_the_pages_of_that_kind(
    tmp_path: Path, tether_home: Path
) -> None:
    with Index.open(Wiki.open(_wiki(tmp_path)), tether_home) as index:
        index.update(watch=False)
        everything = {h.page.path: h.score for h in index.search("deploy", limit=10)}
        episodes = {h.page.path: h.score for h in index.search("deploy", 10, kind="episode")}
        assert set(everything) == {
            "episodes/rollout.md",
            "concepts/postmortem.md",
            "concepts/words.md",
            "concepts/train.md",
        }
        # by folder and by front matter; the word "episode" in a body makes no episode
        assert set(episodes) == {"episodes/rollout.md", "concepts/postmortem.md"}
        # the marker never moves a score: a page ranks the same narrowed or not
        for path, score in episodes.items():
            assert score == everything[path]
        assert index.search("deploy", 10, kind="concept") != []
        assert index.search("deploy", 10, kind="!!") == []  # no word in it: no page


def test_a_kind_search_follows_an_edit_that_changes_the_kind(
    tmp_path: Path, tether_home: Path
) -> None:
    root = _wiki(tmp_path)
    with Index.open(Wiki.open(root), tether_home) as index:
        index.update(watch=False)
        _page(root, "concepts/postmortem.md", "A deploy postmortem, told as it happened.")
        _page(root, "concepts/train.md", "Deploy, deploy, deploy: the deploy train.", "episode")
        index.update(watch=False)
        found = {h.page.path for h in index.search("deploy", 10, kind="episode")}
        assert found == {"episodes/rollout.md", "concepts/train.md"}


def test_an_index_from_an_older_version_is_rebuilt_with_the_markers(
    tmp_path: Path, tether_home: Path
) -> None:
    wiki = Wiki.open(_wiki(tmp_path))
    with Index.open(wiki, tether_home) as index:
        index.update(watch=False)
        path = index.path
        # the index as version 3 wrote it: no kinds column
        index.conn.executescript(
            "DROP TABLE fts; CREATE VIRTUAL TABLE fts USING fts5(title, aliases, description,"
            " headings, body); UPDATE meta SET value = '3' WHERE key = 'version';"
        )
    with Index.open(wiki, tether_home, path) as index:
        stats = index.update(watch=False)
        assert stats.parsed == 4  # every page read again
        found = {h.page.path for h in index.search("deploy", 10, kind="episode")}
        assert found == {"episodes/rollout.md", "concepts/postmortem.md"}
