"""The stale reasons are kept between briefs only while the stale file and the index stand."""

from __future__ import annotations

import json
import time
from pathlib import Path

from tether.wiki.index import Index
from tether.wiki.index_store import RACY_NS
from tether.wiki.layout import Wiki
from tether.wiki.stale import stale_reasons


def _page(root: Path, rel: str, ident: str) -> None:
    path = root / "wiki" / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\nid: {ident}\ntitle: {ident}\n---\n{ident} body\n")


def test_a_changed_stale_file_or_index_gives_the_new_reasons(tmp_path: Path) -> None:
    root = tmp_path / "kb"
    _page(root, "concepts/alpha.md", "alpha")
    _page(root, "concepts/beta.md", "beta")
    stale = root / "wiki" / "stale.json"
    stale.write_text(json.dumps([{"page": "alpha", "reason": "first"}, "gamma"]))
    with Index.open(Wiki.open(root), tmp_path / "home") as index:
        index.update()
        assert stale_reasons(index) == {"concepts/alpha.md": "first"}
        time.sleep(RACY_NS / 1e9 + 0.2)  # the file is no longer racy: the answer is kept
        assert stale_reasons(index) == {"concepts/alpha.md": "first"}
        assert stale_reasons(index) == {"concepts/alpha.md": "first"}
        # the file changes: read again
        stale.write_text(json.dumps([{"page": "beta", "reason": "second"}, "gamma"]))
        assert stale_reasons(index) == {"concepts/beta.md": "second"}
        # the index changes (gamma is a page now): resolved again
        stale.write_text(json.dumps(["gamma"]))
        time.sleep(RACY_NS / 1e9 + 0.2)
        assert stale_reasons(index) == {}
        _page(root, "concepts/gamma.md", "gamma")
        index.update()
        assert stale_reasons(index) == {"concepts/gamma.md": "listed in stale.json"}
