"""The load cache: a warm load reuses the parsed board and still sees every change.

Each test runs twice: with the Linux folder watch (inotify) and with the
portable stat walk (one stat per file, keyed by path, mtime, size, inode).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tether import fswatch
from tether.board import Board, State
from tether.board import cache as board_cache

WATCH_WORKS = fswatch._LIBC is not None


@pytest.fixture(params=["inotify", "stat-walk"])
def mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    if request.param == "inotify" and not WATCH_WORKS:
        pytest.skip("inotify is Linux only")
    monkeypatch.setattr(board_cache, "USE_INOTIFY", request.param == "inotify")
    board_cache._CACHES.clear()
    yield request.param
    board_cache._CACHES.clear()


def _fresh_board(tmp_path: Path) -> Board:
    board = Board(tmp_path / "tickets")
    board.ensure()
    return board


def test_unchanged_board_gives_the_same_view(mode: str, tmp_path: Path) -> None:
    board = _fresh_board(tmp_path)
    board.add("a", state=State.ACTIONABLE)
    first = board.load()
    assert board.load() is first
    assert board.load() is first
    if mode == "inotify":
        assert board._cache.trusted_view is first


def test_in_place_edit_is_seen(mode: str, tmp_path: Path) -> None:
    board = _fresh_board(tmp_path)
    ticket = board.add("a", state=State.ACTIONABLE, body="one\n")
    board.load()
    with ticket.path.open("a", encoding="utf-8") as handle:
        handle.write("two\n")
    assert board.load().tickets[0].body == "one\ntwo\n"


@pytest.mark.parametrize("loads", [1, 2, 3])
def test_edit_keeping_size_and_mtime_is_seen(tmp_path: Path, mode: str, loads: int) -> None:
    """Seen by the watch once it runs (from the second load), else by the ctime."""
    board = _fresh_board(tmp_path)
    ticket = board.add("aaaa", state=State.ACTIONABLE)
    for _ in range(loads):
        board.load()
    before = ticket.path.stat()
    ticket.path.write_text(ticket.path.read_text().replace("aaaa", "bbbb"), encoding="utf-8")
    os.utime(ticket.path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert board.load().tickets[0].title == "bbbb"


@pytest.mark.parametrize("loads", [1, 2, 3])
def test_edit_in_the_same_timestamp_tick_is_seen(tmp_path: Path, mode: str, loads: int) -> None:
    """An edit right after a read may keep mtime, ctime and size (one clock tick): a file
    changed just before it was read is read again until a watch vouches for it."""
    board = _fresh_board(tmp_path)
    ticket = board.add("aaaa", state=State.ACTIONABLE)
    for _ in range(loads):
        board.load()
    with ticket.path.open("r+b") as handle:  # in place: same inode, same size
        data = handle.read()
        handle.seek(0)
        handle.write(data.replace(b"aaaa", b"bbbb"))
    assert board.load().tickets[0].title == "bbbb"


def test_the_watch_starts_at_the_second_load(tmp_path: Path, mode: str) -> None:
    """Most processes read the board once: the first load walks, the second starts the watch."""
    board = _fresh_board(tmp_path)
    board.load()
    assert board._cache.watch is None
    board.load()
    assert (board._cache.watch is not None) == (mode == "inotify")


def test_changes_by_another_process_are_seen(mode: str, tmp_path: Path) -> None:
    board = _fresh_board(tmp_path)
    first = board.add("a", state=State.ACTIONABLE)
    board.load()
    code = (
        "import sys; from pathlib import Path; from tether.board import Board, State;"
        "b = Board(Path(sys.argv[1])); b.move(sys.argv[2], State.DONE); b.add('b')"
    )
    subprocess.run([sys.executable, "-c", code, str(board.root), first.id], check=True, timeout=60)
    view = board.load()
    assert sorted((t.title, t.state.value) for t in view.tickets) == [("a", "DONE"), ("b", "INBOX")]


def test_files_in_sub_folders_and_unknown_folders_are_always_reported(
    mode: str, tmp_path: Path
) -> None:
    board = _fresh_board(tmp_path)
    board.load()
    (board.root / "INBOX" / "sub").mkdir()
    board.load()
    (board.root / "INBOX" / "sub" / "x.md").write_text("x", encoding="utf-8")
    assert [p.name for p, _ in board.load().malformed] == ["x.md"]
    (board.root / "LATER").mkdir()
    assert [p.name for p, _ in board.load().malformed] == ["x.md"]
    (board.root / "LATER" / "y.md").write_text("y", encoding="utf-8")
    assert sorted(p.name for p, _ in board.load().malformed) == ["x.md", "y.md"]


def test_a_state_folder_removed_and_made_again_is_seen(mode: str, tmp_path: Path) -> None:
    board = _fresh_board(tmp_path)
    board.load()
    done = board.root / "DONE"
    done.rmdir()
    board.load()
    done.mkdir()
    board.load()
    ticket = board.add("late", state=State.DONE)
    assert board.load().tickets == (ticket,)


@pytest.mark.parametrize("mode", ["inotify"], indirect=True)
def test_the_watch_is_not_used_across_fork(tmp_path: Path, mode: str) -> None:
    board = _fresh_board(tmp_path)
    board.load()
    board.load()
    watch = board._cache.watch
    assert watch is not None and watch.usable
    watch._pid = -1  # as seen from a forked child
    forked = board._cache.watch  # read again: the narrowing above no longer holds
    assert forked is not None and not forked.usable
    board.add("after fork")
    assert [t.title for t in board.load().tickets] == ["after fork"]
    assert board._cache.watch is not watch


def test_local_filesystems_are_watched(tmp_path: Path) -> None:
    if not WATCH_WORKS:
        pytest.skip("inotify is Linux only")
    assert fswatch._is_remote(str(tmp_path)) is False


@pytest.mark.slow
def test_many_boards_in_one_process_do_not_leak_folder_watches(tmp_path: Path) -> None:
    if not WATCH_WORKS:
        pytest.skip("inotify is Linux only")
    before = len(list(Path("/proc/self/fd").iterdir()))
    for n in range(200):  # more than the usual per-user limit of 128 inotify instances
        board = Board(tmp_path / f"board-{n}")
        board.ensure()
        board.load()
        if n % 50 == 0:
            board_cache._CACHES.clear()
    assert len(list(Path("/proc/self/fd").iterdir())) <= before + board_cache._MAX_BOARDS
    last = Board(tmp_path / "last")
    last.ensure()
    last.load()
    last.load()
    assert last._cache.watch is not None
