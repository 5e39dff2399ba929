"""Pages over the size cap are not indexed but named; unclosed front matter is a finding."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tether.config.schema import WikiSettings
from tether.wiki.index import Index
from tether.wiki.index_schema import MAX_PAGE_BYTES
from tether.wiki.layout import Wiki

TETHER = str(Path(sys.executable).parent / "tether")
CAP = 2048


def _page(root: Path, rel: str, body: str, front: str = "") -> Path:
    path = root / "wiki" / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\n{front}sources: [raw/src.md]\n---\n{body}")
    return path


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    root = tmp_path / "kb"
    (root / "raw").mkdir(parents=True)
    (root / "raw" / "src.md").write_text("the source\n")
    _page(root, "index.md", "[[small]] [[big]]\n")
    _page(root, "concepts/small.md", "A small page about quokkas. [[big]]\n")
    _page(root, "concepts/big.md", "Wombats everywhere. [[small]]\n" + "filler text\n" * 400)
    return root


def tether(root: Path, *args: str, cap: int | None = CAP) -> subprocess.CompletedProcess[str]:
    if cap is not None:
        (root / "tether.toml").write_text(f"[wiki]\nmax_page_bytes = {cap}\n")
    else:
        (root / "tether.toml").unlink(missing_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TETHER_ROOM")}
    return subprocess.run(
        [TETHER, *args],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=env,
    )


def test_a_page_over_the_cap_is_not_indexed_and_is_named(kb: Path) -> None:
    size = (kb / "wiki" / "concepts" / "big.md").stat().st_size
    assert size > CAP
    done = tether(kb, "wiki", "index")
    assert done.returncode == 0, done.stderr
    assert "indexed 2 pages" in done.stdout
    assert "skipped 1 pages over the size cap of 2.0 KiB ([wiki] max_page_bytes)" in done.stdout
    assert f"  wiki/concepts/big.md ({size / 1024:.1f} KiB)" in done.stdout
    data = json.loads(tether(kb, "wiki", "index", "--json").stdout)
    assert data["max_page_bytes"] == CAP
    assert data["skipped"] == [
        {"path": "wiki/concepts/big.md", "size": size, "reason": "over the size cap"}
    ]
    assert json.loads(tether(kb, "wiki", "search", "--json", "wombats").stdout) == []
    checked = tether(kb, "wiki", "check")
    assert checked.returncode == 40
    assert (
        f"wiki/concepts/big.md:1: too-large: the page is {size / 1024:.1f} KiB, over the "
        "indexing cap of 2.0 KiB ([wiki] max_page_bytes): it is not indexed"
    ) in checked.stdout
    # the links to it still resolve to its file: no broken link on its account
    assert "broken-link" not in checked.stdout


@pytest.mark.slow
def test_the_cap_follows_the_setting_and_the_page(kb: Path) -> None:
    assert tether(kb, "wiki", "index").returncode == 0
    raised = json.loads(tether(kb, "wiki", "index", "--json", cap=None).stdout)
    assert raised["skipped"] == [] and raised["max_page_bytes"] == MAX_PAGE_BYTES
    hits = json.loads(tether(kb, "wiki", "search", "--json", "wombats", cap=None).stdout)
    assert [h["id"] for h in hits] == ["big"]
    lowered = json.loads(tether(kb, "wiki", "index", "--json").stdout)
    assert [p["path"] for p in lowered["skipped"]] == ["wiki/concepts/big.md"]
    assert json.loads(tether(kb, "wiki", "search", "--json", "wombats").stdout) == []
    _page(kb, "concepts/big.md", "Wombats, briefly. [[small]]\n")  # shrinks under the cap
    shrunk = json.loads(tether(kb, "wiki", "index", "--json").stdout)
    assert shrunk["skipped"] == []
    hits = json.loads(tether(kb, "wiki", "search", "--json", "wombats").stdout)
    assert [h["id"] for h in hits] == ["big"]


def test_a_skipped_page_is_not_looked_at_again_until_it_changes(
    kb: Path, tether_home: Path
) -> None:
    with Index.open(Wiki.open(kb), tether_home, max_page_bytes=CAP) as index:
        first = index.update(watch=False)
        assert (first.pages, [p.path for p in index.skipped()]) == (2, ["concepts/big.md"])
        again = index.update(watch=False)
        assert (again.parsed, again.changed) == (0, False)
        assert index.find("big") is None and index.find("concepts/big.md") is None


def test_the_default_cap_is_the_same_in_the_config_and_the_index() -> None:
    assert WikiSettings().max_page_bytes == MAX_PAGE_BYTES == 4 * 1024 * 1024


def test_front_matter_without_its_closing_line_is_a_finding(kb: Path) -> None:
    path = kb / "wiki" / "concepts" / "open.md"
    path.write_text("---\ntitle: Open\nsources: [raw/src.md]\n\n# Open\n\nNo end. [[small]]\n")
    _page(kb, "index.md", "[[small]] [[big]] [[open]]\n")
    checked = tether(kb, "wiki", "check", cap=None)
    assert checked.returncode == 40
    assert (
        "wiki/concepts/open.md:1: front-matter: front matter opened with `---` on line 1 is "
        "never closed (no second `---` line), so the whole file is read as body"
    ) in checked.stdout
