"""``tether status`` loads only what its panels need (the speed itself is bench/status.py's).

A fresh process over a home with a run whose processes are all gone, a board
written by tether and no tmux server: the survey cannot find a subagent, so
neither it nor psutil is loaded; the board's tickets are read without PyYAML;
the screen is drawn without rich.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.status.world import add_run, at
from tests.support.loaded import tether_loaded

from tether.board import Board, State

NOT_NEEDED = ("rich", "psutil", "yaml", "tether.watch.survey", "tether.loop.context", "secrets")


def _loaded(project: Path, *args: str) -> tuple[str, set[str]]:
    env = {**os.environ, "TMUX_TMPDIR": str(project / "no-tmux"), "COLUMNS": "120"}
    env.pop("TMUX", None)
    return tether_loaded(project, "status", *args, env=env)


def test_a_status_without_anything_alive_loads_no_survey_no_psutil_no_yaml_no_rich(
    tmp_path: Path, tether_home: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    add_run(tether_home, "r-20260302-092000-aaaaaa", started_at=at(4))  # its supervisor is gone
    board = Board(project / "tickets", project)
    board.ensure()
    board.add("Tidy the parser", priority="P1", state=State.ACTIONABLE)
    board.add("Pick a licence", state=State.USER, reason="decision", front={"needs": "MIT?"})
    for args in ((), ("--json",)):
        # Once the tickets have settled (stored.RACY_NS after they were written, which a
        # busy machine reaches between two probes), status writes the board's cache; its
        # temp file's name comes from os.urandom, so even then secrets is not loaded.
        out, loaded = _loaded(project, *args)
        assert not {m for m in loaded if m.split(".")[0] in NOT_NEEDED or m in NOT_NEEDED}
        assert "Tidy the parser" in out and "Pick a licence" in out
    status = json.loads(_loaded(project, "--json")[0])
    assert status["watch"]["subagents"] == []
    assert [r["id"] for r in status["running"]] == ["r-20260302-092000-aaaaaa"]
    assert status["running"][0]["supervisor_alive"] is False
    assert [e["title"] for e in status["board"]["ready"]] == ["Tidy the parser"]
    assert [e["why"] for e in status["board"]["for_person"]] == ["needs: MIT?"]
