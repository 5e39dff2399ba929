"""`tether ingest run`: one fresh atomic run per entry, one after another; holds go to the user."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest
from tests.outside_agents import without_agent_vars

from tether.core.session_stamp import stamp_session
from tether.ingest.queue import Queue
from tether.wiki.layout import Wiki

TETHER = str(Path(sys.executable).parent / "tether")
CAPTURE = {"fidelity": "verbatim", "authority": "primary", "dialog": "none"}


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    root = tmp_path / "kb"
    (root / "wiki").mkdir(parents=True)
    args = json.dumps(["--format", "claude-code", "--steps", "3"])
    (root / "tether.toml").write_text(
        f'[profiles.ingest]\nharness = "scripted"\nargs = {args}\ndefault = true\n'
    )
    return root


def _ingest_run(kb: Path, env: dict[str, str], timeout: float) -> subprocess.CompletedProcess[str]:
    """``tether ingest run --json`` on the kb's board, as a person runs it."""
    return subprocess.run(
        [TETHER, "ingest", "run", "--json", "--board", str(kb / "tickets")],
        cwd=kb,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env=env,
    )


def _collect(kb: Path, tmp_path: Path, name: str, capture: dict[str, str] | None) -> None:
    source = tmp_path / "in" / name
    source.parent.mkdir(exist_ok=True)
    source.write_text(f"# {name}\n")
    queue = Queue(Wiki.open(kb))
    queue.collect(source, capture=capture)
    queue.release([name])


@pytest.mark.slow
def test_three_entries_three_sequential_runs_one_hold_to_the_user(
    kb: Path, tmp_path: Path, tether_home: Path
) -> None:
    for name in ("a.md", "b.md"):
        _collect(kb, tmp_path, name, CAPTURE)
    _collect(kb, tmp_path, "needs-talk.md", None)  # no capture manifest: key points to confirm
    _collect(kb, tmp_path, "c.md", CAPTURE)
    env = without_agent_vars(os.environ, "TETHER_DEPTH")
    done = _ingest_run(kb, env, timeout=300)
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)
    runs = [r for r in results if r["status"] == "done"]
    assert [r["id"] for r in runs] == ["a.md", "b.md", "c.md"]
    assert len({r["session_id"] for r in runs}) == 3  # a fresh session each
    spans = [
        (datetime.fromisoformat(r["started_at"]), datetime.fromisoformat(r["ended_at"]))
        for r in runs
    ]
    for (_, end), (start, _) in itertools.pairwise(spans):
        assert end <= start  # one after another, never overlapping
    hold = next(r for r in results if r["id"] == "needs-talk.md")
    assert hold["status"] == "user" and "run_id" not in hold
    assert any("key points to confirm" in reason for reason in hold["reasons"])
    assert any("fidelity/authority" in reason for reason in hold["reasons"])
    from tether.board import Board, State

    tickets = Board(kb / "tickets").load().in_state(State.USER, "decision")
    assert [t.title for t in tickets] == ["Ingest needs-talk.md: needs the user"]
    assert "key points to confirm" in tickets[0].body
    queue = Queue(Wiki.open(kb))
    assert [e.id for e in queue.waiting()] == ["needs-talk.md"]  # not run, still waiting
    # the stamp: each receipt's last field and the hand-off's last line name the caller's session
    stamp = f"session: {stamp_session(env) or 'unknown'} | tether-ingest@"
    assert [e.id for e in queue.finished()] == ["a.md", "b.md", "c.md"]
    for done_entry in queue.finished():
        assert list(done_entry.manifest.fields)[-1] == "session_line"
        line = done_entry.manifest.session_line
        assert line is not None and line.startswith(stamp)
    assert tickets[0].path.read_text().rstrip("\n").splitlines()[-1].startswith(stamp)
    assert sorted(e.id for e in queue.finished()) == ["a.md", "b.md", "c.md"]
    records = [
        json.loads((tether_home / "runs" / r["run_id"] / "run.json").read_text()) for r in runs
    ]
    assert [rec["unit"] for rec in records] == ["ingest:a.md", "ingest:b.md", "ingest:c.md"]
    # a second run files no second ticket for the same entry
    again = _ingest_run(kb, env, timeout=120)
    assert json.loads(again.stdout)[0]["ticket"] == tickets[0].id
    assert len(Board(kb / "tickets").load().in_state(State.USER, "decision")) == 1


def test_a_publish_that_exits_42_gives_the_entry_back_to_the_user(
    kb: Path, tmp_path: Path, tether_home: Path
) -> None:
    """A post-run publish/sync that exits 42 needs the user: the entry goes back to incoming/
    with ``sync_exit`` in its manifest, and a USER/decision ticket names the reason."""
    publish = [sys.executable, "-c", "raise SystemExit(42)"]
    toml = kb / "tether.toml"
    toml.write_text(toml.read_text() + f"post_run = [{json.dumps(publish)}]\n")
    _collect(kb, tmp_path, "a.md", CAPTURE)
    env = without_agent_vars(os.environ, "TETHER_DEPTH")
    done = _ingest_run(kb, env, timeout=300)
    assert done.returncode == 0, done.stderr
    [result] = json.loads(done.stdout)
    assert list(result) == [
        "id",
        "status",
        "run_id",
        "session_id",
        "started_at",
        "ended_at",
        "exit_code",
        "reasons",
        "ticket",
    ]
    assert result["id"] == "a.md" and result["status"] == "user"
    # raw/a.md is the entry's own earlier accept (same sha256): no name collision
    assert result["reasons"] == ["a publish/sync exited 42 (needs the user)"]
    assert (kb / "raw" / "a.md").read_text() == "# a.md\n"
    queue = Queue(Wiki.open(kb))
    [back] = queue.waiting()
    assert back.id == "a.md" and back.manifest.sync_exit == 42
    assert back.manifest.ticket == result["ticket"]
    assert not queue.claims() and not queue.finished()
    from tether.board import Board, State

    [ticket] = Board(kb / "tickets").load().in_state(State.USER, "decision")
    assert ticket.id == result["ticket"]
    assert "a publish/sync exited 42" in ticket.body


def test_another_file_under_the_entry_name_in_raw_is_still_a_collision(
    kb: Path, tmp_path: Path, tether_home: Path
) -> None:
    """A file of the same name but other content in raw/ holds the entry for the user
    with the collision reason; the file is left as it was and no run starts."""
    _collect(kb, tmp_path, "a.md", CAPTURE)
    (kb / "raw").mkdir()
    (kb / "raw" / "a.md").write_text("an older capture\n")
    env = without_agent_vars(os.environ, "TETHER_DEPTH")
    done = _ingest_run(kb, env, timeout=300)
    assert done.returncode == 0, done.stderr
    [result] = json.loads(done.stdout)
    assert result["id"] == "a.md" and result["status"] == "user"
    assert "run_id" not in result  # held before any run
    assert result["reasons"] == ["a name collision on accept: raw/a.md already exists"]
    assert (kb / "raw" / "a.md").read_text() == "an older capture\n"
    [back] = Queue(Wiki.open(kb)).waiting()
    assert back.id == "a.md"
