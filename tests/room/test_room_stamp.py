"""The session stamp in the room: the conclusion ends with the stamp of the room's opener.

(docs/explanation/the-session-stamp.md)

The room is a subagent of the session that opened it, so inside the room (whose
own run has its own ``TETHER_SESSION_ID``) the stamp still names the opener's
session: its explicit ``TETHER_SESSION_ID``, else its harness's own variable,
else ``unknown``. Real ``tether`` subprocesses, a real room run of the scripted agent.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
from pathlib import Path

import pytest
from tests.outside_agents import without_agent_vars
from tests.room.room_support import TETHER, SharedWiki, room_question, write_profile
from tests.wikigen import GenWiki

from tether.room.brief import Brief, make_brief
from tether.room.conclusion_check import check_conclusion
from tether.room.room import STATUS_OK, finish_room, room_data
from tether.room.state import Room
from tether.wiki.index import Index
from tether.wiki.layout import Wiki

CASES = [
    ({"CLAUDE_CODE_SESSION_ID": "abc"}, "abc"),
    ({"TETHER_SESSION_ID": "explicit-3", "CLAUDE_CODE_SESSION_ID": "abc"}, "explicit-3"),
    ({}, "unknown"),
]
IDS = ["claude-code", "explicit-first", "unknown"]


def _stamp(session: str) -> str:
    return f"session: {session} | tether-room@{socket.gethostname()} | "


def _clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without any session or room variable, plus ``extra``."""
    outside = without_agent_vars(os.environ, "TETHER_SESSION_ID", "TETHER_DEPTH")
    env = {k: v for k, v in outside.items() if not k.startswith("TETHER_ROOM")}
    return {**env, **extra}


def _brief(gen: GenWiki, home: Path) -> Brief:
    with Index.open(Wiki.open(gen.root), home) as index:
        index.update()
        brief = make_brief(index, room_question(gen.word_of("hub")), 4)
    assert not brief.read_directly and len(_fresh(brief)) >= 2
    return brief


@pytest.fixture(scope="module")
def hub_brief(shared_wiki: SharedWiki) -> Brief:
    """The brief about the hub, made once for the module: the rooms made from it
    read pages and stamp conclusions, never the index."""
    with shared_wiki.index() as index:
        brief = shared_wiki.brief(index, room_question(shared_wiki.gen.word_of("hub")), 4)
    assert not brief.read_directly and len(_fresh(brief)) >= 2
    return brief


def _fresh(brief: Brief) -> list[str]:
    """The listed pages that are not stale (cited without a stale flag)."""
    return [p.id for p in brief.pages if not p.stale]


def _conclusion(brief: Brief) -> str:
    first, second = _fresh(brief)[:2]
    return f"It ties the relations together [[{first}]].\n\n- It depends on [[{second}]].\n"


@pytest.mark.parametrize(("env", "session"), CASES, ids=IDS)
def test_room_conclude_stamps_with_the_openers_session(
    gen: GenWiki,
    hub_brief: Brief,
    tether_home: Path,
    tmp_path: Path,
    env: dict[str, str],
    session: str,
) -> None:
    brief = hub_brief
    room = Room.create(tether_home, "r1", room_data("r1", Wiki.open(gen.root), brief, env))
    for page in _fresh(brief)[:2]:
        assert room.read_page(page).outcome == "read"
    # inside the room: the room run's own session and a harness variable of its own
    inside = _clean_env(
        TETHER_ROOM_DIR=str(room.folder),
        TETHER_ROOM_ID=room.id,
        TETHER_SESSION_ID="the-room-run-itself",
        CODEX_THREAD_ID="the-room-thread",
    )
    done = subprocess.run(
        [TETHER, "room", "conclude", "-"],
        input=_conclusion(brief),
        env=inside,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    text = (room.folder / "conclusion.md").read_text("utf-8")
    assert text.startswith(_conclusion(brief))
    assert text.rstrip("\n").splitlines()[-1].startswith(_stamp(session)), text
    # the stamp is no claim and no word of the conclusion
    result = check_conclusion(text, room)
    assert result.ok, result.violations
    assert result.words == len(_conclusion(brief).split())


def test_a_conclusion_without_conclude_is_stamped_once_when_the_room_finishes(
    gen: GenWiki, hub_brief: Brief, tether_home: Path
) -> None:
    brief = hub_brief
    opener = {"CLAUDE_CODE_SESSION_ID": "abc"}
    room = Room.create(tether_home, "r2", room_data("r2", Wiki.open(gen.root), brief, opener))
    for page in _fresh(brief)[:2]:
        room.read_page(page)
    # the agent's last message, already ending with a stale stamp of another session
    message = _conclusion(brief) + "\nsession: other | x@y | 2020-01-01\n"
    status, result = finish_room(room, message)
    assert status == STATUS_OK and result is not None and result.ok
    lines = (room.folder / "conclusion.md").read_text("utf-8").rstrip("\n").splitlines()
    assert lines[-1].startswith(_stamp("abc"))
    assert sum(line.startswith("session: ") for line in lines) == 1


@pytest.mark.slow
def test_a_real_room_ends_its_conclusion_with_the_harness_session_of_its_opener(
    gen: GenWiki, tether_home: Path, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    brief = _brief(gen, tether_home)
    draft = project / "draft.md"  # in the room agent's work folder: it reads it there
    draft.write_text(_conclusion(brief))
    commands = [f"{TETHER} wiki read {p.id}" for p in brief.pages]
    write_profile(project, [*commands, f"{TETHER} room conclude {draft}"])
    question = room_question(gen.word_of("hub"))
    done = subprocess.run(
        [TETHER, "room", "open", "--root", str(gen.root), "--budget", "4", "--json", question],
        cwd=project,
        env=_clean_env(TETHER_HOME=str(tether_home), CLAUDE_CODE_SESSION_ID="abc"),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == "ok", result["check"]
    written = (Path(result["folder"]) / "conclusion.md").read_text("utf-8")
    assert written.rstrip("\n").splitlines()[-1].startswith(_stamp("abc"))
    assert result["conclusion"] == written
    assert result["run"]["session_id"] != "abc"  # the room ran as its own session
