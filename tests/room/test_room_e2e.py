"""The room end to end: a real `tether room open`, a scripted room agent that really
calls `tether wiki read`, the budget, the circuit breaker and the lock."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.room.room_support import TETHER, room_question, write_profile
from tests.wikigen import GenWiki, generate

from tether.room.brief import make_brief
from tether.room.locks import held_by
from tether.room.room import wiki_lock_path
from tether.wiki.index import Index
from tether.wiki.layout import Wiki


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root


def _room(project: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TETHER_ROOM")}
    env.pop("TETHER_DEPTH", None)
    return subprocess.run(
        [TETHER, "room", *args],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env=env,
    )


def _poll(predicate: Callable[[], bool], timeout: float = 30.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


def _events_text(home: Path, run_id: str) -> str:
    return (home / "runs" / run_id / "events.jsonl").read_text()


@pytest.mark.slow
def test_fourteen_reads_with_b12_refuse_13_and_14_and_the_budget_line_passes(
    gen: GenWiki, project: Path, tether_home: Path, tmp_path: Path
) -> None:
    question = room_question(gen.word_of("hub"))
    with Index.open(Wiki.open(gen.root), tether_home) as index:
        index.update()
        brief = make_brief(index, question, 12)
    listed = [p.id for p in brief.pages]
    extra = [p.id for p in brief.cut[:2]]
    assert len(listed) == 12 and len(extra) == 2
    fresh = [p.id for p in brief.pages[1:] if not p.stale]  # cited without a stale flag
    conclusion = project / "conclusion.md"
    conclusion.write_text(
        f"{gen.word_of('hub').capitalize()} ties the relations together [[hub]].\n\n"
        f"- It depends on the first neighbour [[{fresh[0]}]].\n"
        f"- The second neighbour contrasts with it [[{fresh[1]}]].\n\n"
        f"budget reached, not read: {', '.join(extra)}\n"
    )
    commands = [f"{TETHER} wiki read {page}" for page in [*listed, *extra]]
    commands.append(f"{TETHER} room conclude {conclusion}")
    write_profile(project, commands)
    done = _room(project, "open", "--root", str(gen.root), "--json", question)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == "b01"  # budget hit: the main session decides
    reads = result["reads"]
    assert reads["used"] == 12 and reads["read"] == listed
    assert reads["refused_budget"] == extra and reads["budget_hit"] is True
    assert result["check"]["ok"] is True
    log = [json.loads(x) for x in (Path(result["folder"]) / "reads.jsonl").read_text().splitlines()]
    assert [r["outcome"] for r in log] == ["read"] * 12 + ["refused-budget"] * 2
    events = _events_text(tether_home, result["run"]["run_id"])
    assert f"refused: budget reached (12 of 12 pages read); '{extra[0]}' is not read" in events
    assert result["run"]["stop"] == "completed"


@pytest.mark.slow
def test_a_room_that_tries_to_open_a_room_is_refused(
    gen: GenWiki, project: Path, tether_home: Path, tmp_path: Path
) -> None:
    question = room_question(gen.word_of("concept-00004"))
    conclusion = project / "c.md"
    conclusion.write_text("It is tracked by the operators [[concept-00004]] (stale).\n")
    write_profile(
        project,
        [
            f"{TETHER} wiki read concept-00004",
            f"{TETHER} room open --root {gen.root} 'a nested question'",
            f"{TETHER} room conclude {conclusion}",
        ],
    )
    done = _room(project, "open", "--root", str(gen.root), "--json", question)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == "ok", result["check"]
    events = _events_text(tether_home, result["run"]["run_id"])
    assert "refused: `room open` inside room" in events
    assert "A room never opens a room (depth cap 1)" in events
    rooms = [p for p in (tether_home / "rooms").iterdir() if p.is_dir()]
    assert [p.name for p in rooms] == [result["room"]]  # no second room folder


def _open_in_background(project: Path, root: Path, question: str, session: str) -> Any:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TETHER_ROOM")}
    env["TETHER_SESSION_ID"] = session
    return subprocess.Popen(
        [TETHER, "room", "open", "--root", str(root), question],
        cwd=project,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def _stop(proc: subprocess.Popen[str]) -> None:
    """End a background room; the refusals above are the subject, not how fast it ends."""
    proc.send_signal(signal.SIGTERM)
    try:
        proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()  # a loaded machine: never leave its pipes open for a later test
        proc.communicate(timeout=60)


def _room_as(project: Path, session: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TETHER_ROOM")}
    env.pop("TETHER_DEPTH", None)
    env["TETHER_SESSION_ID"] = session
    return subprocess.run(
        [TETHER, "room", *args],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
    )


def _open_room(home: Path, lock: Path) -> str | None:
    """The id of the room open now on ``lock``'s wiki: its process holds the lock (not merely
    wrote it once) and its folder's room.json is written (the lock is taken first)."""
    holder = held_by(lock) or ""
    if not holder.startswith("room "):
        return None
    room_id = holder.split()[1].rstrip(",")
    return room_id if (home / "rooms" / room_id / "room.json").exists() else None


@pytest.mark.slow
def test_one_room_per_wiki_and_never_two_for_one_session(
    gen: GenWiki, project: Path, tether_home: Path, tmp_path: Path
) -> None:
    # a small second wiki: its room's brief embeds its pages from nothing, and the rule
    # is about two wikis, not their size
    other_wiki = generate(tmp_path / "kb2", pages=12)
    question = room_question(gen.word_of("concept-00004"))
    # each room hangs for good in a read the room allows (the gate refuses any other call):
    # it stays open until SIGTERM, so it is open while the others are tried
    write_profile(project, [f"{TETHER} wiki read concept-00004"], "--hang-before-result", "1")
    first = _open_in_background(project, gen.root, question, "session-a")
    try:
        lock = wiki_lock_path(tether_home, gen.root)
        assert _poll(lambda: _open_room(tether_home, lock) is not None, timeout=120)
        other = room_question(gen.word_of("concept-00100"))
        # another session, same wiki: refused
        same_wiki = _room_as(project, "session-b", "open", "--root", str(gen.root), other)
        assert same_wiki.returncode == 30
        assert "refused: a room is already open on this wiki (room " in same_wiki.stderr
        assert "one room per wiki" in same_wiki.stderr
        # the same session, another wiki: refused
        same_session = _room_as(project, "session-a", "open", "--root", str(other_wiki.root), other)
        assert same_session.returncode == 30
        assert "refused: this session already has a room open (room " in same_session.stderr
        assert first.poll() is None and held_by(lock)  # both were refused by an open room
        # another session, another wiki: a room of its own
        second = _open_in_background(
            project,
            other_wiki.root,
            room_question(other_wiki.word_of("concept-00004")),
            "session-b",
        )
        try:
            lock2 = wiki_lock_path(tether_home, other_wiki.root)
            assert _poll(lambda: _open_room(tether_home, lock2) is not None, timeout=120)
            assert first.poll() is None and second.poll() is None  # two rooms open at once
            opened = [p for p in (tether_home / "rooms").iterdir() if p.is_dir()]
            assert len(opened) == 2
        finally:
            _stop(second)
    finally:
        _stop(first)
    assert len([p for p in (tether_home / "rooms").iterdir() if p.is_dir()]) == 2


@pytest.mark.slow
def test_room_open_text_names_the_pages_and_the_cut_list(
    gen: GenWiki, project: Path, tether_home: Path, tmp_path: Path
) -> None:
    conclusion = project / "c.md"
    conclusion.write_text("The hub ties the relations together [[hub]].\n")
    write_profile(project, [f"{TETHER} wiki read hub", f"{TETHER} room conclude {conclusion}"])
    question = room_question(gen.word_of("hub"))
    with Index.open(Wiki.open(gen.root), tether_home) as index:
        index.update()
        brief = make_brief(index, question, 12)
    done = _room(project, "open", "--root", str(gen.root), question)
    assert done.returncode == 0, done.stderr
    assert f"  pages (B=12): {', '.join(p.id for p in brief.pages)}\n" in done.stdout
    shown = ", ".join(p.id for p in brief.cut)
    assert f"  cut by the budget ({brief.cut_total}): {shown}" in done.stdout
    stale = "; ".join(f"{p.id} (source changed)" for p in brief.cut if p.stale)
    assert (f"  cut and stale: {stale}\n" in done.stdout) == bool(stale)


def test_cut_stale_pages_are_named_in_the_text(gen: GenWiki, tether_home: Path) -> None:
    from tether.cli.room import cut_lines

    with Index.open(Wiki.open(gen.root), tether_home) as index:
        index.update()
        brief = make_brief(index, room_question(gen.word_of("concept-00004")), 1)
    stale = [p for p in brief.cut if p.stale]
    assert stale, [p.id for p in brief.cut]
    lines = cut_lines(brief)
    assert lines[0].startswith(f"  cut by the budget ({brief.cut_total}): ")
    assert lines[1] == "  cut and stale: " + "; ".join(f"{p.id} ({p.stale_reason})" for p in stale)


@pytest.mark.slow  # a room open: index and sentence model in a process
def test_read_directly_opens_no_room(gen: GenWiki, project: Path, tether_home: Path) -> None:
    write_profile(project, ["echo never"])
    done = _room(project, "open", "--root", str(gen.root), f"What is {gen.word_of('isolated-0')}?")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("read directly (1 pages, no room needed):")
    assert not (tether_home / "rooms").exists() or not any(
        p.is_dir() for p in (tether_home / "rooms").iterdir()
    )
