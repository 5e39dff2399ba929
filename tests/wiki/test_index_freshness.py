"""The index is never served stale: every kind of change to real files is seen.

Each test runs twice: with the folder watch a long-lived process keeps
(``watch``: after the first update, an update looks only where events point)
and with the walk a fresh process does (``walk``: every page stat-ed). After
the changes, the index must equal one built from scratch.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tether import fswatch
from tether.wiki import index_store
from tether.wiki.index import Index
from tether.wiki.index_schema import UpdateStats
from tether.wiki.layout import Wiki

TETHER = str(Path(sys.executable).parent / "tether")


class Kb:
    """A small tether wiki and its index, updated the way ``mode`` says."""

    def __init__(self, root: Path, home: Path, mode: str) -> None:
        self.root = root
        self.mode = mode
        self.home = home
        (root / "wiki" / "concepts").mkdir(parents=True)
        (root / "raw").mkdir()
        self.page("alpha", "Alpha is about oldword. See [[beta]].")
        self.page("beta", "Beta is about betaword.")
        self.index = Index.open(Wiki.open(root), home)
        self.update(walk_ok=True)

    def path(self, name: str) -> Path:
        return self.root / "wiki" / "concepts" / f"{name}.md"

    def page(self, name: str, body: str, folder: Path | None = None, front: str = "") -> Path:
        file = (folder or self.root / "wiki" / "concepts") / f"{name}.md"
        text = f"---\nid: {name}\nsources: [raw/s.md]\n{front}---\n{body}\n"
        file.write_text(text, encoding="utf-8")
        return file

    def update(self, walk_ok: bool = False) -> UpdateStats:
        stats = self.index.update(watch=self.mode == "watch")
        if self.mode == "walk":
            assert stats.walked
        elif not walk_ok:
            assert not stats.walked, "the watch should have named what to look at"
        return stats

    def finds(self, word: str) -> list[str]:
        return [h.page.path for h in self.index.search(word)]

    def key(self, name: str) -> Any:
        row = self.index.conn.execute(
            "SELECT key FROM files WHERE path = ?", (f"concepts/{name}.md",)
        ).fetchone()
        return row[0]

    def assert_same_as_a_fresh_build(self) -> None:
        with Index(self.index.wiki, self.home / "fresh.sqlite") as fresh:
            fresh.update(watch=False)
            assert _content(self.index) == _content(fresh)


def _content(index: Index) -> tuple[list[Any], ...]:
    conn = index.conn
    pages = conn.execute(
        "SELECT path, id, declared_id, title, kind, description, aliases, sources, links, facts,"
        " headings FROM pages ORDER BY path"
    ).fetchall()
    text = conn.execute(
        "SELECT p.path, f.title, f.aliases, f.body, f.kinds FROM fts f"
        " JOIN pages p ON p.rowid = f.rowid"
        " ORDER BY p.path"
    ).fetchall()
    edges = sorted(conn.execute("SELECT * FROM edges").fetchall(), key=repr)
    files = conn.execute("SELECT path FROM files ORDER BY path").fetchall()
    return pages, text, edges, files


def rewrite_in_place(path: Path, old: str, new: str) -> None:
    """Same inode, same size, and the old mtime put back: only the change time tells."""
    assert len(old) == len(new)
    before = path.stat()
    data = path.read_bytes()
    assert old.encode() in data
    with path.open("r+b") as handle:
        handle.write(data.replace(old.encode(), new.encode()))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (
        before.st_ino,
        before.st_size,
        before.st_mtime_ns,
    )


@pytest.fixture(params=["watch", "walk"])
def kb(request: pytest.FixtureRequest, tmp_path: Path, tether_home: Path) -> Kb:
    if request.param == "watch" and fswatch._LIBC is None:
        pytest.skip("the folder watch is Linux only")
    return Kb(tmp_path / "kb", tether_home, request.param)


def test_nothing_changed_reads_nothing(kb: Kb) -> None:
    for _ in range(3):
        stats = kb.update()
        assert (stats.parsed, stats.removed, stats.changed, stats.pages) == (0, 0, False, 2)


def test_edit_in_place_keeping_size_and_mtime_is_seen(kb: Kb) -> None:
    rewrite_in_place(kb.path("alpha"), "oldword", "newword")
    assert kb.update().parsed == 1
    assert kb.finds("newword") == ["concepts/alpha.md"]
    assert kb.finds("oldword") == []
    kb.assert_same_as_a_fresh_build()


def test_edits_within_one_timestamp_tick_are_seen(kb: Kb) -> None:
    """Back-to-back edits of equal size: the second may carry the very same mtime and
    ctime as the first (a coarse clock). A page read so soon after its change is stored
    without a key (racy), so the next look reads it whatever its stat says."""
    page = kb.path("alpha")
    for n in range(6):
        page.write_text(page.read_text().replace(f"word{n - 1}" if n else "oldword", f"word{n}"))
        kb.update()
        assert kb.finds(f"word{n}") == ["concepts/alpha.md"]
        assert kb.key("alpha") is None  # read right after its change: racy, no key kept
    kb.assert_same_as_a_fresh_build()


def test_a_racy_page_is_checked_by_its_bytes_and_keeps_its_key_once_old(
    kb: Kb, monkeypatch: pytest.MonkeyPatch
) -> None:
    rewrite_in_place(kb.path("beta"), "betaword", "betaterm")
    kb.update()
    assert kb.key("beta") is None
    if kb.mode == "walk":  # the walk reads it again: same bytes, nothing parsed
        assert kb.update().parsed == 0
    monkeypatch.setattr(index_store, "RACY_NS", 0)  # as if the change were long ago
    rewrite_in_place(kb.path("beta"), "betaterm", "betaword")
    assert kb.update().parsed == 1
    assert kb.key("beta") is not None
    assert kb.update().parsed == 0


def test_an_editor_save_by_rename_with_the_same_size_and_mtime_is_seen(kb: Kb) -> None:
    page = kb.path("alpha")
    before = page.stat()
    temp = page.with_name("alpha.md.saving")
    temp.write_bytes(page.read_bytes().replace(b"oldword", b"newword"))
    os.utime(temp, ns=(before.st_atime_ns, before.st_mtime_ns))
    temp.replace(page)
    kb.update()
    assert kb.finds("newword") == ["concepts/alpha.md"]
    kb.assert_same_as_a_fresh_build()


def test_renames_deletions_links_and_aliases(kb: Kb) -> None:
    kb.path("beta").rename(kb.path("gamma"))
    kb.update()
    assert kb.finds("betaword") == ["concepts/gamma.md"]
    kb.assert_same_as_a_fresh_build()
    rewrite_in_place(kb.path("alpha"), "[[beta]]", "[[gama]]")  # a link edit only
    kb.update()
    kb.assert_same_as_a_fresh_build()
    kb.page("gamma", "Now with an alias.", front="aliases: [gama]\n")
    kb.update()
    [edge] = kb.index.edges_from(["concepts/alpha.md"])
    assert (edge.dst, edge.how) == ("concepts/gamma.md", "alias")
    kb.path("gamma").unlink()
    kb.update()
    assert kb.index.page_count() == 1
    kb.assert_same_as_a_fresh_build()


def test_folders_created_moved_in_edited_and_removed(kb: Kb, tmp_path: Path) -> None:
    topics = kb.root / "wiki" / "topics"
    topics.mkdir()
    kb.page("delta", "Delta is about deltaword.", folder=topics)
    kb.update()
    assert kb.finds("deltaword") == ["topics/delta.md"]
    outside = tmp_path / "outside" / "more"
    outside.mkdir(parents=True)
    moved = kb.page("epsilon", "Epsilon is about epsword.", folder=outside)
    outside.rename(topics / "more")
    kb.update()
    assert kb.finds("epsword") == ["topics/more/epsilon.md"]
    rewrite_in_place(topics / "more" / moved.name, "epsword", "epsterm")  # now watched too
    kb.update()
    assert kb.finds("epsterm") == ["topics/more/epsilon.md"]
    kb.assert_same_as_a_fresh_build()
    shutil.rmtree(topics)
    kb.update(walk_ok=True)  # a watched folder went away: the watch walks again
    assert kb.finds("epsterm") == [] and kb.index.page_count() == 2
    kb.assert_same_as_a_fresh_build()


def test_a_page_replaced_by_a_folder_of_the_same_name(kb: Kb) -> None:
    odd = kb.path("odd")
    odd.write_text("Odd page.\n")
    kb.update()
    odd.unlink()
    odd.mkdir()
    inner = kb.page("inner", "Inner is about innerword.", folder=odd)
    kb.update()
    assert kb.finds("innerword") == ["concepts/odd.md/inner.md"]
    rewrite_in_place(inner, "innerword", "innerterm")
    kb.update()
    assert kb.finds("innerterm") == ["concepts/odd.md/inner.md"]
    kb.assert_same_as_a_fresh_build()


def test_a_page_edited_through_another_hard_link_is_seen(kb: Kb, tmp_path: Path) -> None:
    other = tmp_path / "elsewhere.md"
    os.link(kb.path("alpha"), other)
    kb.update()
    rewrite_in_place(other, "oldword", "newword")  # no event in any watched folder
    kb.update()
    assert kb.finds("newword") == ["concepts/alpha.md"]
    kb.assert_same_as_a_fresh_build()


def test_a_symlinked_page_follows_its_target(kb: Kb, tmp_path: Path) -> None:
    drafts = kb.root / "wiki" / ".drafts"  # hidden: neither walked nor watched
    drafts.mkdir()
    target = kb.page("real", "The draft is about draftword.", folder=drafts)
    link = kb.path("linked")
    link.symlink_to(Path("..") / ".drafts" / "real.md")
    kb.update()
    assert kb.finds("draftword") == ["concepts/linked.md"]
    rewrite_in_place(target, "draftword", "draftterm")
    kb.update()
    assert kb.finds("draftterm") == ["concepts/linked.md"]
    outside = tmp_path / "secret.md"
    outside.write_text("secretword\n")
    (drafts / "swap").symlink_to(outside)
    (drafts / "swap").replace(target)  # the target is now a link leaving the wiki
    kb.update()
    assert kb.finds("secretword") == [] and kb.finds("draftterm") == []
    kb.assert_same_as_a_fresh_build()


def test_an_attachment_resolves_a_link_once_it_exists(kb: Kb) -> None:
    kb.page("pics", "![[diagram.png]]")
    kb.update()
    assert [e.dst for e in kb.index.edges_from(["concepts/pics.md"])] == [None]
    (kb.root / "wiki" / "concepts" / "diagram.png").write_bytes(b"\x89PNG")
    kb.update()
    assert [e.dst for e in kb.index.edges_from(["concepts/pics.md"])] == ["concepts/diagram.png"]
    kb.assert_same_as_a_fresh_build()


def test_changes_by_another_process_are_seen(kb: Kb) -> None:
    code = (
        "import sys, pathlib; p = pathlib.Path(sys.argv[1]);"
        "p.write_text(p.read_text().replace('oldword', 'newword'))"
    )
    subprocess.run([sys.executable, "-c", code, str(kb.path("alpha"))], check=True, timeout=60)
    kb.update()
    assert kb.finds("newword") == ["concepts/alpha.md"]


@pytest.mark.parametrize("kb", ["watch"], indirect=True)
def test_the_watch_walks_again_after_another_writer(kb: Kb) -> None:
    rewrite_in_place(kb.path("beta"), "betaword", "betaterm")
    with Index.open(kb.index.wiki, kb.home) as other:  # another connection writes first
        assert other.update(watch=False).parsed == 1
    assert kb.update(walk_ok=True).walked
    assert kb.finds("betaterm") == ["concepts/beta.md"]
    assert not kb.update().walked


@pytest.mark.parametrize("kb", ["watch"], indirect=True)
def test_a_forked_child_does_not_trust_the_parent_watch(kb: Kb) -> None:
    from tether.wiki.freshness import tracker_for

    tracker = tracker_for(str(kb.index.path), str(kb.index.wiki.pages_dir))
    assert tracker.watch is not None
    tracker.watch._pid = -1  # as seen from a forked child
    assert kb.update(walk_ok=True).walked
    assert not kb.update().walked


@pytest.mark.parametrize("kb", ["walk"], indirect=True)
def test_a_command_sees_an_edit_that_keeps_size_and_mtime(kb: Kb) -> None:
    rewrite_in_place(kb.path("alpha"), "oldword", "newword")
    done = subprocess.run(
        [TETHER, "room", "brief", "--root", str(kb.root), "--json", "newword"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert '"path": "wiki/concepts/alpha.md"' in done.stdout


@pytest.mark.parametrize("kb", ["watch"], indirect=True)
def test_an_overflowing_event_queue_makes_the_watch_walk(kb: Kb) -> None:
    try:
        limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    except (OSError, ValueError):
        pytest.skip("the kernel's event queue size is unknown")
    if limit > 200_000:
        pytest.skip(f"an event queue of {limit} takes too long to fill")
    alpha, beta = kb.path("alpha"), kb.path("beta")
    for n in range(limit // 2 + 10):  # alternating, so the kernel cannot merge them
        os.utime(alpha if n % 2 else beta, ns=(n, n))
    rewrite_in_place(alpha, "oldword", "newword")
    assert kb.update(walk_ok=True).walked
    assert kb.finds("newword") == ["concepts/alpha.md"]
    assert not kb.update().walked


@pytest.mark.parametrize("kb", ["walk"], indirect=True)
def test_commands_updating_one_index_at_once_agree(kb: Kb) -> None:
    for n in range(60):
        kb.page(f"extra-{n:02d}", f"Extra page {n} links to [[alpha]] and [[extra-{n + 1:02d}]].")
    rewrite_in_place(kb.path("alpha"), "oldword", "newword")
    argv = [TETHER, "wiki", "index", "--root", str(kb.root), "--json"]
    pipe = subprocess.PIPE
    runs = [subprocess.Popen(argv, stdout=pipe, stderr=pipe) for _ in range(3)]
    for run in runs:
        out, err = run.communicate(timeout=120)
        assert run.returncode == 0, err.decode()
        assert b'"pages": 62' in out
    assert kb.update().parsed == 0
    assert kb.finds("newword") == ["concepts/alpha.md"]
    kb.assert_same_as_a_fresh_build()
