"""``tether status``: each panel against its golden, from a home built through the library.

The goldens are golden/<panel>.json (the panel of ``--json``) and
golden/<panel>.txt (the panel as people see it). A missing or different golden
fails; to rewrite them after a deliberate change run
``.venv/bin/python -m pytest tests/status/test_status_panels.py --update-goldens``
(refused under ``CI=true``) and review the diff.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from tests.status.world import NOW, World, add_run, at, normalize

from tether.config import load_config
from tether.status import view
from tether.status.collect import PANELS, Options, collect, look
from tether.status.textui import render

GOLDEN = Path(__file__).parent / "golden"


def _status(world: World) -> dict[str, Any]:
    config = load_config(cwd=world.project)
    return collect(config, now=NOW, options=Options(survey=False))


def _check(name: str, text: str, update: bool) -> None:
    path = GOLDEN / name
    if update:
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"golden {path} is missing; make it with --update-goldens and review it"
    assert text == path.read_text(encoding="utf-8")


@pytest.mark.slow
@pytest.mark.parametrize("panel", PANELS)
def test_each_panel_matches_its_golden(world: World, panel: str, update_goldens: bool) -> None:
    status = _status(world)
    assert list(status) == ["schema", "generated_at", "home", *PANELS]
    data = json.dumps(status[panel], indent=2, sort_keys=True, ensure_ascii=False)
    _check(f"{panel}.json", normalize(data, world) + "\n", update_goldens)
    looked = look(load_config(cwd=world.project), now=NOW, options=Options(survey=False))
    # this process's id would change the text's width
    rooms = [replace(room, pid=4242) for room in looked.rooms]
    text = render(view.panel(replace(looked, rooms=rooms), panel, 120), colour=False)
    _check(f"{panel}.txt", normalize(text, world), update_goldens)


@pytest.mark.slow
def test_the_command_prints_the_same_object_and_every_panel(world: World) -> None:
    env = {**os.environ, "TETHER_HOME": str(world.home), "COLUMNS": "160"}
    out = subprocess.run(
        [sys.executable, "-m", "tether.cli.main", "status", "--json"],
        cwd=world.project,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    shown = json.loads(out)
    expected = _status(world)
    for board in (*shown["loops"], *expected["loops"]):
        board["last_tick"].pop("age_seconds")  # "now" differs
    assert shown["loops"] == expected["loops"]
    assert [r["id"] for r in shown["running"]] == [r["id"] for r in expected["running"]]
    assert shown["ended"] == expected["ended"]
    assert shown["gate"] == expected["gate"] and shown["room"] == expected["room"]
    assert shown["ingest"] == expected["ingest"]
    people = subprocess.run(
        [sys.executable, "-m", "tether.cli.main", "status"],
        cwd=world.project,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for title, _ in view.PANELS.values():
        assert title in people
    assert "STOP (user-only)" in people and "r-20260302-091000-bbbbbb" in people


def test_a_new_run_shows_up_without_any_cache(world: World) -> None:
    add_run(world.home, "r-20260302-092500-dddddd", unit="T-3", iterations=1, started_at=at(1))
    running = _status(world)["running"]
    assert [r["id"] for r in running] == ["r-20260302-092500-dddddd", "r-20260302-092000-aaaaaa"]
    assert running[0]["iterations"] == 1 and running[0]["unit"] == "T-3"


def test_an_orchestrator_whose_process_is_gone_shows_gone(world: World) -> None:
    config = load_config(cwd=world.project)
    status = collect(config, now=NOW, options=Options(survey=True))
    (lead,) = status["watch"]["orchestrators"]
    assert lead["name"] == "lead" and lead["state"] == "gone"


def test_a_home_without_a_store_shows_empty_panels_and_creates_nothing(
    tmp_path: Path, tether_home: Path
) -> None:
    status = collect(load_config(cwd=tmp_path), now=NOW)
    assert status["running"] == [] and status["ended"] == [] and status["loops"] == []
    assert not tether_home.exists()


def test_an_unreadable_store_is_one_line_and_exit_3(tmp_path: Path, tether_home: Path) -> None:
    tether_home.mkdir()
    (tether_home / "tether.db").write_bytes(b"this is not a database" * 100)
    done = subprocess.run(
        [sys.executable, "-m", "tether.cli.main", "status"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 3
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "not a readable tether database" in lines[0]
    assert done.stdout == ""


def _documented(section: str) -> list[str]:
    text = (Path(__file__).parents[2] / "docs" / "reference" / "status.md").read_text("utf-8")
    body = text.split(f"### `{section}`", 1)[1].split("\n### ", 1)[0]
    return re.findall(r"^\| `([^`]+)` \|", body, flags=re.MULTILINE)


def test_the_reference_documents_every_key(world: World) -> None:
    status = _status(world)
    top = (Path(__file__).parents[2] / "docs" / "reference" / "status.md").read_text("utf-8")
    head = top.split("### ", 1)[0]
    assert re.findall(r"^\| `([^`]+)` \|", head, flags=re.MULTILINE) == list(status)
    assert set(status["running"][0]) == set(_documented("running[]"))
    assert set(status["loops"][0]) == set(_documented("loops[]"))
    assert set(status["watch"]) == set(_documented("watch"))
    assert set(status["gate"]) | {"error"} == set(_documented("gate"))
    assert set(status["ingest"]) | {"error"} == set(_documented("ingest"))
    assert set(status["room"]) == set(_documented("room"))
    assert set(status["ended"][0]) == set(_documented("ended[]"))
    assert set(status["fleet"]) | {"error"} == set(_documented("fleet"))
    assert set(status["board"]) | {"error"} == set(_documented("board"))


def test_a_run_without_a_sandbox_says_so(world: World) -> None:
    """Runs record ``sandbox`` (``off: <why>`` when their agent had none): the screen marks
    those, and neither a sandboxed run nor one from before sandboxes."""
    looked = look(load_config(cwd=world.project), now=NOW, options=Options(survey=False))
    first, second = looked.ended
    first, second = (
        replace(first, sandbox="off: --no-sandbox"),
        replace(second, sandbox="bubblewrap"),
    )
    running = [replace(looked.running[0], sandbox=None), *looked.running[1:]]
    status = replace(looked, ended=[first, second], running=running)
    lines = render(view.panel(status, "ended", 140), colour=False).splitlines()
    marked = [line for line in lines if "UNSANDBOXED" in line]
    assert len(marked) == 1 and first.id in marked[0]
    assert "UNSANDBOXED" not in render(view.panel(status, "running", 140), colour=False)
