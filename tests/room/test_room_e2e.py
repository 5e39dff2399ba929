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

import pytest
from room_support import TETHER, write_profile

from tether.room.brief import make_brief
from tether.wiki.index import Index
from tether.wiki.layout import Wiki
from wikigen import GenWiki, generate


@pytest.fixture
def gen(tmp_path: Path) -> GenWiki:
    return generate(tmp_path / "kb", pages=300)


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


def test_fourteen_reads_with_b12_refuse_13_and_14_and_the_budget_line_passes(
    gen: GenWiki, project: Path, tether_home: Path, tmp_path: Path
) -> None:
    question = f"What is {gen.word_of('hub')}?"
    with Index.open(Wiki.open(gen.root), tether_home) as index:
        index.update()
        brief = make_brief(index, question, 12)
    listed = [p.id for p in brief.pages]
    extra = [p.id for p in brief.cut[:2]]
    assert len(listed) == 12 and len(extra) == 2
    conclusion = tmp_path / "conclusion.md"
    conclusion.write_text(
        f"{gen.word_of('hub').capitalize()} ties the relations together [[hub]].\n\n"
        f"- It depends on the first neighbour [[{listed[1]}]].\n"
        f"- The second neighbour contrasts with it [[{listed[2]}]].\n\n"
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


def test_a_room_that_tries_to_open_a_room_is_refused(
    gen: GenWiki, project: Path, tether_home: Path, tmp_path: Path
) -> None:
    question = f"What is {gen.word_of('concept-00004')}?"
    conclusion = tmp_path / "c.md"
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


def test_a_second_room_while_one_is_open_is_refused(
    gen: GenWiki, project: Path, tether_home: Path
) -> None:
    question = f"What is {gen.word_of('concept-00004')}?"
    write_profile(project, None, "--steps", "3", "--hang-before-result", "1")
    env = {k: v for k, v in os.environ.items() if not k.startswith("TETHER_ROOM")}
    first = subprocess.Popen(
        [TETHER, "room", "open", "--root", str(gen.root), question],
        cwd=project,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        lock = tether_home / "rooms" / ".lock"
        assert _poll(lambda: lock.exists() and "room " in lock.read_text())
        other = f"What is {gen.word_of('concept-00100')}?"
        second = _room(project, "open", "--root", str(gen.root), other)
        assert second.returncode == 30
        assert "refused: a room is already open (room " in second.stderr
        assert "never two rooms in parallel" in second.stderr
    finally:
        first.send_signal(signal.SIGTERM)
        first.communicate(timeout=60)
    assert len([p for p in (tether_home / "rooms").iterdir() if p.is_dir()]) == 1


def test_read_directly_opens_no_room(gen: GenWiki, project: Path, tether_home: Path) -> None:
    write_profile(project, ["echo never"])
    done = _room(project, "open", "--root", str(gen.root), f"What is {gen.word_of('isolated-0')}?")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("read directly (1 pages, no room needed):")
    assert not (tether_home / "rooms").exists() or not any(
        p.is_dir() for p in (tether_home / "rooms").iterdir()
    )
