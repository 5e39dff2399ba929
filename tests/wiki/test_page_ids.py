"""A declared page id that reads as a path is reported by `wiki check` and is never an id."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tether.wiki.layout import assign_ids, unsafe_id

TETHER = str(Path(sys.executable).parent / "tether")


def _page(root: Path, rel: str, front: str, body: str) -> None:
    path = root / "wiki" / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\n{front}sources: [raw/src.md]\n---\n{body}")


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    root = tmp_path / "kb"
    (root / "raw").mkdir(parents=True)
    (root / "raw" / "src.md").write_text("the source\n")
    _page(root, "index.md", "title: Index\n", "[[evil]] [[shadow]] [[fine]]\n")
    _page(root, "concepts/evil.md", "title: Evil\nid: ../../etc/passwd\n", "Passwords. [[fine]]\n")
    _page(root, "concepts/shadow.md", "id: /etc/shadow\n", "Shadows. [[fine]]\n")
    _page(root, "concepts/fine.md", "id: concepts/fine\n", "Fine. [[evil]]\n")
    return root


def tether(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TETHER_ROOM")}
    return subprocess.run(
        [TETHER, *args, "--root", str(root)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=env,
    )


def test_check_reports_path_like_ids_with_file_and_line(kb: Path) -> None:
    done = tether(kb, "wiki", "check")
    assert done.returncode == 40, done.stdout
    assert (
        "wiki/concepts/evil.md:3: unsafe-id: id '../../etc/passwd' reads as a path "
        "(it climbs folders (`.` or `..`)); it is not used, the page is known as 'evil'."
    ) in done.stdout
    assert (
        "wiki/concepts/shadow.md:2: unsafe-id: id '/etc/shadow' reads as a path "
        "(it is an absolute path)"
    ) in done.stdout
    assert "concepts/fine.md" not in done.stdout  # a plain id with a slash is fine
    skipped = tether(kb, "wiki", "check", "--skip", "unsafe-id")
    assert skipped.returncode == 0, skipped.stdout


@pytest.mark.slow
def test_path_like_ids_are_not_addressable(kb: Path) -> None:
    for name in ("../../etc/passwd", "/etc/shadow", "/etc/passwd", "etc/passwd"):
        done = tether(kb, "wiki", "read", name)
        assert done.returncode == 2, (name, done.stdout)
        assert "no page" in done.stderr
    assert "Passwords." in tether(kb, "wiki", "read", "evil").stdout  # by its file name
    assert "Fine." in tether(kb, "wiki", "read", "concepts/fine").stdout
    hits = json.loads(tether(kb, "wiki", "search", "--json", "passwords shadows").stdout)
    ids = {h["id"] for h in hits}
    assert {"evil", "shadow"} <= ids
    assert not any(i.startswith("/") or ".." in i for i in ids)


def test_ids_are_assigned_without_path_like_declarations() -> None:
    ids = assign_ids(
        [
            ("a/evil.md", "../../etc/passwd"),
            ("b/shadow.md", "/etc/shadow"),
            ("c/win.md", "C:\\Windows"),
            ("d/ok.md", "d/ok-id"),
        ]
    )
    assert ids == {
        "a/evil.md": "evil",
        "b/shadow.md": "shadow",
        "c/win.md": "win",
        "d/ok.md": "d/ok-id",
    }
    assert unsafe_id("a//b") and unsafe_id("x/./y") and unsafe_id("~/x") and unsafe_id("a\nb")
    assert unsafe_id("concepts/search-design") is None
