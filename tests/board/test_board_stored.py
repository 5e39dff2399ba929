"""The parse cache between processes (``tether.board.stored``): real files, real stats.

A "new process" is simulated in-process by dropping the process-wide caches
(``cache._CACHES``), and for real by a child Python process. Every test checks
what the board shows against the files, never against the cache's own word.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from tether.board import Board, State, Ticket, stored
from tether.board import cache as board_cache

SETTLE_NS = 200_000_000  # the tests' "racily clean" window: 0.2 s instead of 2 s


@pytest.fixture(autouse=True)
def _fresh_caches(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    board_cache._CACHES.clear()
    yield
    board_cache._CACHES.clear()


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The files parsed (not taken from a cache) from now on."""
    seen: list[Path] = []
    real = board_cache.parse_file

    def counting(path: Path, *args: Any, **kwargs: Any) -> Any:
        seen.append(path)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(board_cache, "parse_file", counting)
    return seen


@pytest.fixture
def short_window(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stored, "RACY_NS", SETTLE_NS)


def _settle() -> None:
    """Let every file written so far leave the racy window (``short_window``)."""
    time.sleep(SETTLE_NS / 1e9 + 0.05)


def _home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return home


def _new_process_board(tmp_path: Path) -> Board:
    """The board as a new process sees it: no parse in memory, the same home."""
    board_cache._CACHES.clear()
    return Board(tmp_path / "tickets", home=_home(tmp_path))


def _cache_file(tmp_path: Path) -> Path:
    files = list((_home(tmp_path) / stored.FOLDER).glob("board-*"))
    assert len(files) == 1, files
    return files[0]


def _records(tmp_path: Path) -> dict[str, Any]:
    board = Board(tmp_path / "tickets")
    found = stored.read(_cache_file(tmp_path), os.path.realpath(board.root), stored.stamp())
    assert found is not None
    return found


def _shown(board: Board) -> dict[str, tuple[str, str, str]]:
    view = board.load()
    return {t.id: (t.location, t.title, t.body) for t in view.tickets}


def _truth(tmp_path: Path) -> dict[str, tuple[str, str, str]]:
    """What a board with no cache at all (no home, nothing in memory) shows."""
    board_cache._CACHES.clear()
    return _shown(Board(tmp_path / "tickets"))


def _kept_board(tmp_path: Path) -> tuple[Board, list[Ticket]]:
    """A board of a few tickets whose parses are all in the cache file."""
    board = Board(tmp_path / "tickets", home=_home(tmp_path))
    board.ensure()
    tickets = [
        board.add("first", state=State.ACTIONABLE, body="one\n"),
        board.add("second", state=State.ACTIONABLE, body="two\n"),
        board.add("third", body="three\n"),
    ]
    _settle()
    board.load()
    assert set(_records(tmp_path)) == {str(t.path.relative_to(board.root)) for t in tickets}, (
        "every settled file is kept"
    )
    return board, tickets


def test_a_new_process_takes_the_kept_parses_and_parses_nothing(
    tmp_path: Path, short_window: None, parses: list[Path]
) -> None:
    board, _ = _kept_board(tmp_path)
    before = _shown(board)
    parses.clear()
    again = _new_process_board(tmp_path)
    assert _shown(again) == before
    assert parses == []
    assert before == _truth(tmp_path)


def test_every_field_survives_the_cache(tmp_path: Path, short_window: None) -> None:
    """A parse taken from the file equals the parse of the file, field by field."""
    root = tmp_path / "tickets"
    board = Board(root, home=_home(tmp_path))
    board.ensure()
    board.add("done one", state=State.DONE)
    board.add(
        "blocked on a command",
        state=State.BLOCKED,
        reason="dependency",
        front={"blocked_by": "the build", "check": ["make", "test"], "labels": ["a", "b"]},
    )
    board.add("waits", state=State.WAITING, reason="scheduled", front={"until": date(2031, 2, 3)})
    board.add("needs a person", state=State.USER, reason="decision", front={"needs": "a yes"})
    (root / "ACTIONABLE" / "T-20250601-000000001.md").write_text(
        "---\nid: T-20250601-000000001\ntitle: '  spaced   title '\npriority: P1\n"
        "created: 2025-06-01T11:30:00+02:00\nruns: [r-1, r-2]\nreport: r.md\nlast_run: r-2\n"
        "nested: {a: [1, 2.5, true, null], b: {c: text}}\nwhen: 2025-01-02\n---\nbody\n",
        encoding="utf-8",
    )
    (root / "ACTIONABLE" / "T-20250601-000000002.md").write_text("---\nid: [\n---\n")
    (root / "INBOX" / "a note.txt").write_text("an idea\n", encoding="utf-8")
    _settle()
    first = board.load()
    assert len(_records(tmp_path)) == 7
    again = _new_process_board(tmp_path).load()
    assert again == first  # tickets (every field, front and body), informal, malformed
    assert repr(again) == repr(first)  # ... of the same types, timestamps in the same zone
    by_id = {t.id: t for t in again.tickets}
    odd = by_id["T-20250601-000000001"]
    assert odd.title == "spaced   title" and odd.runs == ("r-1", "r-2")
    assert odd.created.isoformat() == "2025-06-01T09:30:00+00:00"
    assert odd.front["when"] == date(2025, 1, 2)
    assert [p for p, _ in again.malformed] == [root / "ACTIONABLE" / "T-20250601-000000002.md"]


def _edit_in_place(path: Path, old: bytes, new: bytes) -> None:
    """Same inode, same size; the mtime is put back as it was (only the ctime moves)."""
    assert len(old) == len(new)
    before = path.stat()
    with path.open("r+b") as handle:
        data = handle.read()
        assert old in data
        handle.seek(0)
        handle.write(data.replace(old, new))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_mtime_ns, after.st_size, after.st_ino) == (
        before.st_mtime_ns,
        before.st_size,
        before.st_ino,
    )


def test_an_edit_keeping_size_inode_and_mtime_is_seen_by_a_new_process(
    tmp_path: Path, short_window: None
) -> None:
    _, tickets = _kept_board(tmp_path)
    _edit_in_place(tickets[0].path, b"first", b"fyrst")
    assert _shown(_new_process_board(tmp_path))[tickets[0].id][1] == "fyrst"
    assert _shown(_new_process_board(tmp_path)) == _truth(tmp_path)


def test_a_file_changed_just_before_the_read_is_not_kept(tmp_path: Path) -> None:
    """Real 2 s window: a file younger than that when read is parsed again by the next
    process, so an edit in the same clock tick (same mtime, ctime, size) cannot hide."""
    board = Board(tmp_path / "tickets", home=_home(tmp_path))
    board.ensure()
    ticket = board.add("aaaa", state=State.ACTIONABLE)
    board.load()
    path = ticket.path
    real_root = os.path.realpath(board.root)
    cache = stored.store_path(_home(tmp_path), real_root)
    kept = stored.read(cache, real_root, stored.stamp()) if cache.exists() else {}
    assert kept is not None and str(path.relative_to(board.root)) not in kept
    _edit_in_place(path, b"aaaa", b"bbbb")
    assert _shown(_new_process_board(tmp_path))[ticket.id][1] == "bbbb"


@pytest.mark.parametrize("change", ["edit", "grow", "add", "move", "delete", "replace"])
def test_a_change_made_outside_is_seen_by_a_new_process(
    tmp_path: Path, short_window: None, change: str
) -> None:
    board, tickets = _kept_board(tmp_path)
    path = tickets[0].path
    if change == "edit":
        path.write_text(path.read_text().replace("first", "FIRST"), encoding="utf-8")
    elif change == "grow":
        path.write_text(path.read_text() + "more\n", encoding="utf-8")
    elif change == "add":
        Board(tmp_path / "tickets").add("fourth", state=State.ACTIONABLE)
    elif change == "move":
        path.rename(board.root / "DONE" / path.name)
    elif change == "delete":
        path.unlink()
    else:  # a new file renamed over it (an editor's save): new inode
        temp = path.with_name(".save.tmp")
        temp.write_text(path.read_text().replace("first", "F1rst"), encoding="utf-8")
        temp.replace(path)
    truth = _truth(tmp_path)
    assert _shown(_new_process_board(tmp_path)) == truth
    _settle()
    assert _shown(_new_process_board(tmp_path)) == truth  # after the file was rewritten
    assert _shown(_new_process_board(tmp_path)) == truth  # and read back


@pytest.mark.parametrize(
    "damage", ["garbage", "empty", "truncated", "one byte", "bad record", "other board"]
)
def test_a_damaged_cache_file_is_not_trusted(
    tmp_path: Path, short_window: None, parses: list[Path], damage: str
) -> None:
    board, tickets = _kept_board(tmp_path)
    truth = _truth(tmp_path)
    cache = _cache_file(tmp_path)
    data = cache.read_bytes()
    real_root = os.path.realpath(board.root)
    if damage == "garbage":
        cache.write_bytes(b"\x00\xff not a cache \x93" * 50)
    elif damage == "empty":
        cache.write_bytes(b"")
    elif damage == "truncated":
        cache.write_bytes(data[: len(data) // 2])
    elif damage == "one byte":  # a title changed inside the file: the checksum fails
        at = data.index(b"second")
        cache.write_bytes(data[:at] + b"S" + data[at + 1 :])
    else:
        records = _records(tmp_path)
        name = str(tickets[1].path.relative_to(board.root))
        if damage == "bad record":  # well formed file, nonsense record for a real stat
            records[name] = [*records[name][:4], "t", ["not", "a", "ticket"]]
            assert stored.write(cache, real_root, stored.stamp(), records)
        else:  # a file made for another board (the name is only a CRC)
            records[name][5][0]["title"] = "from elsewhere"
            assert stored.write(cache, "/elsewhere", stored.stamp(), records)
    parses.clear()
    assert _shown(_new_process_board(tmp_path)) == truth
    assert parses, "the damaged file was not taken at its word"
    # ... and it was replaced by a good one
    parses.clear()
    assert _shown(_new_process_board(tmp_path)) == truth
    assert parses == []


def test_a_cache_of_another_tether_is_not_trusted(
    tmp_path: Path, short_window: None, parses: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    _kept_board(tmp_path)
    monkeypatch.setattr(stored, "FORMAT", stored.FORMAT + 1)
    parses.clear()
    assert _shown(_new_process_board(tmp_path)) == _truth(tmp_path)
    assert len(parses) >= 3


def test_a_cache_that_cannot_be_written_is_silent_and_harmless(
    tmp_path: Path, short_window: None, parses: list[Path]
) -> None:
    home = _home(tmp_path)
    (home / stored.FOLDER).write_text("a file where the cache folder would be")
    board = Board(tmp_path / "tickets", home=home)
    board.ensure()
    ticket = board.add("one", state=State.ACTIONABLE)
    _settle()
    assert _shown(board) == _truth(tmp_path)
    assert board._cache.store is None  # gave up for this process, said nothing
    ticket.path.write_text(ticket.path.read_text().replace("one", "two"), encoding="utf-8")
    assert _shown(_new_process_board(tmp_path))[ticket.id][1] == "two"
    assert (home / stored.FOLDER).read_text() == "a file where the cache folder would be"
    assert sorted(p.name for p in home.iterdir()) == [stored.FOLDER]


def test_no_home_no_cache_file(tmp_path: Path) -> None:
    board = Board(tmp_path / "tickets", home=tmp_path / "not made yet")
    board.ensure()
    board.add("one", state=State.ACTIONABLE)
    board.load()
    assert not (tmp_path / "not made yet").exists()


_CHILD = """
import json, sys
from pathlib import Path
from tether.board import Board, cache
parsed = []
real = cache.parse_file
cache.parse_file = lambda path, *a, **k: parsed.append(str(path)) or real(path, *a, **k)
view = Board(Path(sys.argv[1]), home=Path(sys.argv[2])).load()
print(json.dumps({"titles": sorted(t.title for t in view.tickets), "parsed": len(parsed)}))
"""


def _child(tmp_path: Path, *, read_only_home: bool = False) -> dict[str, Any]:
    argv = [sys.executable, "-c", _CHILD, str(tmp_path / "tickets"), str(_home(tmp_path))]
    if read_only_home:
        home = str(_home(tmp_path))
        argv = ["bwrap", "--dev-bind", "/", "/", "--ro-bind", home, home, *argv]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    result: dict[str, Any] = json.loads(done.stdout)
    return result


@pytest.mark.slow  # sits out the real 2 s settle window (stored.RACY_NS)
def test_real_processes_share_the_cache_and_see_an_edit(tmp_path: Path) -> None:
    board = Board(tmp_path / "tickets")
    board.ensure()
    tickets = [board.add(f"ticket {n}", state=State.ACTIONABLE) for n in range(5)]
    time.sleep(stored.RACY_NS / 1e9 + 0.1)  # the real window: every file settled
    assert _child(tmp_path) == {"titles": [f"ticket {n}" for n in range(5)], "parsed": 5}
    assert _child(tmp_path)["parsed"] == 0
    _edit_in_place(tickets[2].path, b"ticket 2", b"tocket 2")
    titles = _child(tmp_path)["titles"]
    assert "tocket 2" in titles and "ticket 2" not in titles


@pytest.mark.slow  # sits out the real 2 s settle window (stored.RACY_NS)
@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
def test_a_read_only_home_is_not_written_and_the_board_is_right(tmp_path: Path) -> None:
    """As inside an agent's sandbox: the home is mounted read-only."""
    board = Board(tmp_path / "tickets")
    board.ensure()
    board.add("one", state=State.ACTIONABLE)
    time.sleep(stored.RACY_NS / 1e9 + 0.1)
    before = sorted(_home(tmp_path).rglob("*"))
    assert _child(tmp_path, read_only_home=True) == {"titles": ["one"], "parsed": 1}
    assert sorted(_home(tmp_path).rglob("*")) == before == []
    assert _child(tmp_path)["parsed"] == 1  # writable again: written now
    assert _child(tmp_path, read_only_home=True)["parsed"] == 0  # and read from there
