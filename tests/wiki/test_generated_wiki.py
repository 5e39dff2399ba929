"""A generated 300-page tether wiki: incremental index, provenance check, path safety."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.wikigen import GenWiki, generate

from tether.core.errors import PathEscapeError
from tether.wiki.index import Index
from tether.wiki.layout import Wiki
from tether.wiki.wiki_check import check

TETHER = str(Path(sys.executable).parent / "tether")


def _tether(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([TETHER, *args], capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture
def gen(tmp_path: Path) -> GenWiki:
    return generate(tmp_path / "kb", pages=300)


def test_index_is_incremental_by_mtime(gen: GenWiki, tether_home: Path) -> None:
    with Index.open(Wiki.open(gen.root), tether_home) as index:
        first = index.update()
        assert (first.pages, first.parsed) == (301, 301)  # 300 + the index page
        assert index.update().parsed == 0
        page = gen.root / gen.pages["concept-00001"].path
        page.write_text(page.read_text() + "\nA new line about quasarwidget.\n")
        os.utime(page, ns=(page.stat().st_atime_ns, page.stat().st_mtime_ns + 10**9))
        (gen.root / gen.pages["concept-00002"].path).unlink()
        third = index.update()
        assert (third.parsed, third.removed, third.pages) == (1, 1, 300)
        assert [h.page.id for h in index.search("quasarwidget")] == ["concept-00001"]


def test_check_of_the_generated_wiki_finds_only_the_isolated_orphans(gen: GenWiki) -> None:
    done = _tether("wiki", "check", "--root", str(gen.root), "--json")
    result = json.loads(done.stdout)
    assert result["provenance_checked"] is True
    assert [(v["path"], v["kind"]) for v in result["violations"]] == [
        (f"wiki/concepts/isolated-{n}.md", "orphan") for n in range(3)
    ]
    assert done.returncode == 40


def test_provenance_violations_are_reported_with_file_and_line(
    gen: GenWiki, tether_home: Path
) -> None:
    bad = gen.root / "wiki" / "concepts" / "mixed.md"
    bad.write_text(
        "---\nid: mixed\nsources: [raw/source-01.md, raw/nowhere.md]\n---\n"
        "# Mixed\n\nLinks to [[hub]] and [[no such page]].\n\n"
        "- [fact] from the listed source (source: raw/source-01.md)\n"
        "- [fact] from another source (source: raw/source-02.md)\n"
        "- [fact] from a missing one (source: raw/gone.md)\n"
        "- [fact] escaping (source: ../../etc/passwd)\n"
    )
    (gen.root / "wiki" / "concepts" / "nosource.md").write_text(
        "---\nid: nosource\n---\nSee [[mixed]].\n"
    )
    (gen.root / "wiki" / "index.md").write_text(
        (gen.root / "wiki" / "index.md").read_text() + "- [[nosource]]\n"
    )
    with Index.open(Wiki.open(gen.root), tether_home) as index:
        index.update()
        result = check(index)
    found = [str(v) for v in result.violations if "isolated" not in v.path]
    assert found == [
        "wiki/concepts/mixed.md:3: missing-source: source 'raw/nowhere.md' is not in raw/",
        "wiki/concepts/mixed.md:7: broken-link: [[no such page]] points at no page "
        "(no file, name or alias 'no such page')",
        "wiki/concepts/mixed.md:10: unlisted-source: fact cites source 'raw/source-02.md', "
        "which the page does not list in `sources:` (a fact from another source?)",
        "wiki/concepts/mixed.md:11: missing-source: fact cites source 'raw/gone.md', which "
        "is not in raw/",
        "wiki/concepts/mixed.md:12: missing-source: fact cites source '../../etc/passwd', "
        "which is outside raw/",
        "wiki/concepts/nosource.md:1: no-source: the page names no source; add "
        "`sources: [raw/<file>]` to its front matter",
    ]


@pytest.mark.slow
def test_path_safety_of_page_reads(gen: GenWiki, tmp_path: Path) -> None:
    outside = tmp_path / "secret.md"
    outside.write_text("# Secret\n")
    link = gen.root / "wiki" / "concepts" / "leak.md"
    link.symlink_to(outside)
    for name in ("../../etc/passwd", "/etc/passwd", "leak", "../raw/source-01.md"):
        done = _tether("wiki", "read", "--root", str(gen.root), name)
        assert done.returncode != 0, name
        assert "Secret" not in done.stdout and "root:" not in done.stdout
    check_out = json.loads(_tether("wiki", "check", "--root", str(gen.root), "--json").stdout)
    assert {
        "path": "wiki/concepts/leak.md",
        "line": 1,
        "kind": "outside-root",
        "message": "symlink resolves outside the wiki; it is not read",
    } in check_out["violations"]
    with pytest.raises(PathEscapeError):
        Wiki.open(gen.root).page_file("../../etc/passwd")
    done = _tether("wiki", "read", "--root", str(gen.root), "hub")
    assert done.returncode == 0 and '"id": "hub"' in done.stdout
