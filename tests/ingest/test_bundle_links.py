"""Symlinks in captured material never carry a file from outside into quarantine/ or raw/."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from tests.ingest.test_queue import tether

from tether.ingest.bundle import DANGLING, LOOP, OUTSIDE, SPECIAL
from tether.ingest.entry import HumanStopError
from tether.ingest.intake import Collected
from tether.ingest.queue import Queue
from tether.wiki.layout import Wiki

SECRET = "the secret outside the bundle\n"


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    root = tmp_path / "kb"
    (root / "wiki").mkdir(parents=True)
    return root


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    path = tmp_path / "outside" / "secret.md"
    path.parent.mkdir()
    path.write_text(SECRET)
    return path


def _repo(tmp_path: Path, secret: Path) -> Path:
    """A captured repository with every kind of link and one fifo."""
    repo = tmp_path / "repo"
    (repo / "docs").mkdir(parents=True)
    (repo / "docs" / "README.md").write_text("# Repo\n\nThe docs.\n")
    (repo / "LICENSE").write_text("MIT\n")
    (repo / "evil.md").symlink_to("/etc/passwd")
    (repo / "docs" / "up.md").symlink_to(os.path.relpath(secret, repo / "docs"))
    (repo / "docs" / "license.md").symlink_to("../LICENSE")  # inside: kept
    (repo / "absolute.md").symlink_to(repo / "docs" / "README.md")  # inside, absolute
    (repo / "docs-link").symlink_to("docs")  # a folder inside: kept
    (repo / "loop").symlink_to("loop")
    (repo / "dangling.md").symlink_to("nothing-here.md")
    os.mkfifo(repo / "pipe")
    return repo


def _real_files(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


def test_collect_leaves_out_links_that_leave_the_bundle_and_says_so(
    kb: Path, tmp_path: Path, secret: Path
) -> None:
    repo = _repo(tmp_path, secret)
    done = tether(kb, "collect", str(repo))
    assert done.returncode == 0, done.stderr
    assert "left out evil.md -> /etc/passwd: symlink resolves outside the bundle" in done.stdout
    assert "left out docs/up.md -> ../../outside/secret.md: symlink resolves outside" in done.stdout
    assert "left out loop -> loop: symlink loop" in done.stdout
    assert "left out pipe: not a regular file, folder or symlink" in done.stdout
    copy = kb / "quarantine" / "repo" / "repo"
    assert not os.path.lexists(copy / "evil.md")
    assert not os.path.lexists(copy / "docs" / "up.md")
    assert not os.path.lexists(copy / "loop") and not os.path.lexists(copy / "pipe")
    # links that stay inside stay, as relative links into the copy
    assert (copy / "docs" / "license.md").is_symlink()
    assert (copy / "docs" / "license.md").resolve() == (copy / "LICENSE").resolve()
    assert (copy / "absolute.md").readlink() == Path("docs/README.md")
    assert (copy / "docs-link").resolve() == (copy / "docs").resolve()
    manifest = json.loads((kb / "quarantine" / "repo" / "manifest.json").read_text())
    skipped = {s["path"]: (s["reason"], s["target"]) for s in manifest["skipped"]}
    assert skipped == {
        "evil.md": (OUTSIDE, "/etc/passwd"),
        "docs/up.md": (OUTSIDE, "../../outside/secret.md"),
        "loop": (LOOP, "loop"),
        "dangling.md": (DANGLING, "nothing-here.md"),
        "pipe": (SPECIAL, None),
    }
    # the size counts what was copied, not what the links point at
    assert manifest["size"] == _real_files(copy) == len("# Repo\n\nThe docs.\n") + len("MIT\n")


def test_release_and_next_put_no_outside_file_into_raw(
    kb: Path, tmp_path: Path, secret: Path
) -> None:
    repo = _repo(tmp_path, secret)
    queue = Queue(Wiki.open(kb))
    queue.collect(repo)
    queue.release(["repo"])
    claimed = tether(kb, "next", "--json", TETHER_SESSION_ID="s-1")
    assert claimed.returncode == 0, claimed.stderr
    raw = kb / "raw" / "repo"
    assert (raw / "docs" / "README.md").read_text() == "# Repo\n\nThe docs.\n"
    raw_root = raw.resolve()
    for path in raw.rglob("*"):
        assert path.resolve().is_relative_to(raw_root), path
        if path.is_file():
            assert path.read_text() != SECRET and "root:" not in path.read_text()
    assert not os.path.lexists(raw / "evil.md")


def test_the_digest_never_reads_through_a_link_out(kb: Path, tmp_path: Path, secret: Path) -> None:
    repo = _repo(tmp_path, secret)
    queue = Queue(Wiki.open(kb))
    first = queue.collect(repo)
    secret.write_text("the secret changed\n")  # only the outside file changes
    shutil.rmtree(kb / "quarantine")
    second = Queue(Wiki.open(kb)).collect(repo)
    assert isinstance(first, Collected) and isinstance(second, Collected)
    assert (first.sha256, first.size) == (second.sha256, second.size)


def test_a_link_planted_after_release_is_left_out_on_accept(
    kb: Path, tmp_path: Path, secret: Path
) -> None:
    repo = tmp_path / "clean"
    repo.mkdir()
    (repo / "a.md").write_text("# A\n")
    queue = Queue(Wiki.open(kb))
    queue.collect(repo)
    queue.release(["clean"])
    (kb / "incoming" / "clean" / "clean" / "planted.md").symlink_to(secret)
    done = tether(kb, "next", TETHER_SESSION_ID="s-2")
    assert done.returncode == 0, done.stderr
    assert (kb / "raw" / "clean" / "a.md").read_text() == "# A\n"
    assert not os.path.lexists(kb / "raw" / "clean" / "planted.md")
    manifest = json.loads((kb / "incoming" / ".claimed" / "clean" / "manifest.json").read_text())
    assert [(s["path"], s["reason"]) for s in manifest["skipped"]] == [("planted.md", OUTSIDE)]


def test_a_source_swapped_for_a_symlink_is_a_stop(kb: Path, tmp_path: Path, secret: Path) -> None:
    source = tmp_path / "notes.md"
    source.write_text("# Notes\n")
    queue = Queue(Wiki.open(kb))
    queue.collect(source)
    queue.release(["notes.md"])
    payload = kb / "incoming" / "notes.md" / "notes.md"
    payload.unlink()
    payload.symlink_to(secret)
    done = tether(kb, "next", TETHER_SESSION_ID="s-3")
    assert done.returncode == 41, done.stderr
    assert "is not a regular file inside the queue" in done.stderr
    assert not os.path.lexists(kb / "raw" / "notes.md")
    assert (kb / "incoming" / "notes.md").is_dir()  # given back to the human, not lost
    with pytest.raises(HumanStopError):
        queue.claim(queue.waiting()[0], "lib")


def test_a_symlinked_entry_folder_is_no_entry(kb: Path, tmp_path: Path, secret: Path) -> None:
    outside = tmp_path / "outside-entry"
    outside.mkdir()
    (outside / "manifest.json").write_text(
        json.dumps({"id": "x", "name": "secret.md", "kind": "source"})
    )
    (outside / "secret.md").symlink_to(secret)
    (kb / "incoming").mkdir()
    (kb / "incoming" / "x").symlink_to(outside)
    assert Queue(Wiki.open(kb)).waiting() == []
    done = tether(kb, "next", TETHER_SESSION_ID="s-4")
    assert (done.returncode, done.stdout) == (0, "nothing waits in incoming/\n")
    assert not (kb / "raw").exists()
