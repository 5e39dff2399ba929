"""The session stamp in the ingest queue: the receipt of an ended entry and the hand-off
of an entry that needs the user end with the session stamp
(docs/explanation/the-session-stamp.md).

The receipt is the manifest of the entry in ``incoming/.done/``: ``ended_at`` and, as its
last field, ``session_line``. The session is the explicit ``TETHER_SESSION_ID``, else the
harness's own variable, else ``unknown``.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from tests.ingest.test_queue import _sources, tether

from tether.board import Board
from tether.ingest.queue import Queue
from tether.ingest.unattended import ticket_for
from tether.wiki.layout import Wiki

CASES = [
    ({"CLAUDE_CODE_SESSION_ID": "abc"}, "abc"),
    ({"TETHER_SESSION_ID": "explicit-4", "CLAUDE_CODE_SESSION_ID": "abc"}, "explicit-4"),
    ({}, "unknown"),
]
IDS = ["claude-code", "explicit-first", "unknown"]


def _stamp(session: str) -> str:
    return f"session: {session} | tether-ingest@{socket.gethostname()} | "


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    root = tmp_path / "kb"
    (root / "wiki").mkdir(parents=True)
    return root


def _one_waiting(kb: Path, tmp_path: Path) -> Queue:
    queue = Queue(Wiki.open(kb))
    (source,) = _sources(tmp_path, 1)
    queue.collect(source)
    queue.release(["source-0.md"])
    return queue


@pytest.mark.parametrize(("env", "session"), CASES, ids=IDS)
def test_ingest_end_writes_the_receipt_with_the_stamp_last(
    kb: Path, tmp_path: Path, env: dict[str, str], session: str
) -> None:
    queue = _one_waiting(kb, tmp_path)
    claimed = tether(kb, "next", "--json", **env)
    assert claimed.returncode == 0, claimed.stderr
    assert json.loads(claimed.stdout)["id"] == "source-0.md"
    # with no session variable each process is its own context: name the entry
    ended = tether(kb, "end", "--entry", "source-0.md", **env)
    assert ended.returncode == 0, ended.stderr
    (done,) = queue.finished()
    receipt = json.loads((done.folder / "manifest.json").read_text("utf-8"))
    assert list(receipt)[-2:] == ["ended_at", "session_line"]
    assert receipt["session_line"].startswith(_stamp(session))
    lines = (done.folder / "manifest.json").read_text("utf-8").rstrip("\n").splitlines()
    assert lines[-2].strip() == f'"session_line": {json.dumps(receipt["session_line"])}'


def test_an_entry_ended_again_keeps_one_stamp_as_the_last_field(kb: Path, tmp_path: Path) -> None:
    queue = _one_waiting(kb, tmp_path)
    (entry,) = queue.waiting()
    mine = queue.claim(entry, "owner-1")
    assert mine is not None
    mine = queue.update_manifest(mine, session_line="session: stale | x@y | 2020-01-01", n=1)
    done = queue.end("owner-1", env={"CODEX_THREAD_ID": "thr-5"})
    receipt = json.loads((done.folder / "manifest.json").read_text("utf-8"))
    assert list(receipt)[-1] == "session_line" and "n" in receipt
    assert receipt["session_line"].startswith(_stamp("thr-5"))


@pytest.mark.parametrize(("env", "session"), CASES, ids=IDS)
def test_the_hand_off_of_an_entry_that_needs_the_user_ends_with_the_stamp(
    kb: Path, tmp_path: Path, env: dict[str, str], session: str
) -> None:
    queue = _one_waiting(kb, tmp_path)
    (entry,) = queue.waiting()
    ticket_id = ticket_for(kb / "tickets", entry, ["fidelity/authority to set"], env)
    ticket = Board(kb / "tickets").get(ticket_id)
    last = ticket.path.read_text("utf-8").rstrip("\n").splitlines()[-1]
    assert last.startswith(_stamp(session)), last
