"""Depth cap 1 is about rooms: a room never opens a room.

A room's run is a run, and a run never starts inside another run (its budget
would not count against the outer one): a session ``tether run`` started does
not open a room either, and is told so in one line.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path

import pytest
from tests.room.room_support import TETHER, room_question
from tests.wikigen import GenWiki

from tether.room.room import refuse_nesting
from tether.room.state import RoomRefusedError


def _profiles(
    project: Path, outer: list[str], room: list[str], room_format: str = "claude-code"
) -> None:
    """Two scripted profiles: `outer` (a session started by `tether run`) and `room`.

    A room in the ``pi`` format stands for a harness without the gate's hook:
    then the room's own commands are the boundary, found by the process tree.
    """
    text = "kill_grace_seconds = 0.5\n"
    for name, commands in (("outer", outer), ("room", room)):
        script = project / f"{name}-commands.txt"
        script.write_text("\n".join(commands) + "\n", encoding="utf-8")
        form = room_format if name == "room" else "claude-code"
        args = ["--format", form, "--commands-file", str(script)]
        default = "true" if name == "outer" else "false"
        text += f'\n[profiles.{name}]\nharness = "scripted"\nargs = {json.dumps(args)}\n'
        text += f"default = {default}\n"
    (project / "tether.toml").write_text(text, encoding="utf-8")


def _run_outer(project: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TETHER_ROOM")}
    env.pop("TETHER_DEPTH", None)  # a run a human starts
    return subprocess.run(
        [TETHER, "run", "--profile", "outer", "--prompt", "ask the wiki", "--unit", "outer"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
        env=env,
    )


def _events(home: Path) -> dict[str, str]:
    return {p.name: (p / "events.jsonl").read_text() for p in (home / "runs").iterdir()}


@pytest.mark.slow
def test_a_session_started_by_tether_run_cannot_open_a_room(
    gen: GenWiki, tmp_path: Path, tether_home: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    question = room_question(gen.word_of("concept-00004"))
    open_room = (
        f"{TETHER} room open --root {gen.root} --profile room --json {shlex.quote(question)}"
    )
    _profiles(project, outer=["sh -c 'echo depth=$TETHER_DEPTH'", open_room], room=["true"])
    done = _run_outer(project)
    assert done.returncode == 0, done.stderr
    assert not (tether_home / "rooms").exists() or not any((tether_home / "rooms").iterdir())
    (outer,) = _events(tether_home).values()  # no room run either
    assert "depth=1" in outer  # the caller is a supervised run ...
    assert "refused: `room open` inside run" in outer  # ... and it is told in one line


@pytest.mark.slow
def test_a_nested_room_open_with_its_variables_removed_is_refused_by_the_gate(
    gen: GenWiki, tmp_path: Path, tether_home: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    question = room_question(gen.word_of("concept-00004"))
    conclusion = project / "c.md"
    conclusion.write_text("It is tracked by the operators [[concept-00004]] (stale).\n")
    nested = (
        f"env -u TETHER_ROOM_DIR -u TETHER_ROOM_ID {TETHER} room open --root {gen.root} "
        f"--profile room {shlex.quote(question)}"
    )
    _profiles(
        project,
        outer=["true"],  # the room is opened by the person (_open_room)
        room=[
            f"{TETHER} wiki read concept-00004",
            nested,
            f"{TETHER} room conclude {conclusion}",
        ],
        room_format="pi",
    )
    done = _open_room(project, gen.root, question)
    assert done.returncode == 0, done.stderr
    rooms = [p for p in (tether_home / "rooms").iterdir() if p.is_dir()]
    assert len(rooms) == 1  # no second room
    # the gate's room rule refuses the call before it runs, and the room logs it
    reads = [json.loads(line) for line in (rooms[0] / "reads.jsonl").read_text().splitlines()]
    refused = [r for r in reads if r["outcome"] == "refused-tool"]
    assert len(refused) == 1 and "room open" in refused[0]["asked"], reads
    room_run = json.loads((rooms[0] / "result.json").read_text())["run"]["run_id"]
    assert "a room is already open" not in _events(tether_home)[room_run]


def _open_room(project: Path, root: Path, question: str) -> subprocess.CompletedProcess[str]:
    """``tether room open`` as the person (or an orchestrator outside any run) opens it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TETHER_ROOM")}
    env.pop("TETHER_DEPTH", None)
    return subprocess.run(
        [TETHER, "room", "open", "--root", str(root), "--profile", "room", question],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
        env=env,
    )


def test_only_a_room_is_refused_by_its_environment() -> None:
    refuse_nesting({})
    refuse_nesting({"TETHER_DEPTH": "1", "TETHER_RUN_ID": "r-1"})  # a supervised session
    refuse_nesting({"TETHER_DEPTH": "3"})
    with pytest.raises(RoomRefusedError, match=r"inside room r-7\. A room never opens a room"):
        refuse_nesting({"TETHER_ROOM_ID": "r-7", "TETHER_ROOM_DIR": "/x", "TETHER_DEPTH": "2"})
    with pytest.raises(RoomRefusedError, match="inside the room at /rooms/x"):
        refuse_nesting({"TETHER_ROOM_DIR": "/rooms/x"})


@pytest.mark.slow
def test_reads_with_the_room_variables_removed_are_refused_by_the_gate(
    gen: GenWiki, tmp_path: Path, tether_home: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    question = room_question(gen.word_of("concept-00004"))
    conclusion = project / "c.md"
    conclusion.write_text("It is tracked by the operators [[concept-00004]] (stale).\n")
    stripped = f"env -u TETHER_ROOM_DIR -u TETHER_ROOM_ID {TETHER} wiki read"
    _profiles(
        project,
        outer=["true"],  # the room is opened by the person (_open_room)
        room=[
            f"{stripped} concept-00004",  # on the list: read, and counted
            f"{stripped} concept-00200",  # not on the list: refused like any read in a room
            f"{TETHER} room conclude {conclusion}",
        ],
        room_format="pi",
    )
    done = _open_room(project, gen.root, question)
    # both reads were refused, so the conclusion cites a page the room did not read
    assert done.returncode == 40, done.stderr
    (room,) = [p for p in (tether_home / "rooms").iterdir() if p.is_dir()]
    listed = json.loads((room / "room.json").read_text())["pages"]
    assert "concept-00200" not in {page["id"] for page in listed}
    # with its variables removed a read is not a plain `tether wiki read`: the gate's
    # room rule refuses it before it runs, on the list or not, and the room logs both
    reads = [json.loads(line) for line in (room / "reads.jsonl").read_text().splitlines()]
    assert [r["outcome"] for r in reads] == ["refused-tool", "refused-tool"], reads
    assert "concept-00004" in reads[0]["asked"] and "concept-00200" in reads[1]["asked"]
