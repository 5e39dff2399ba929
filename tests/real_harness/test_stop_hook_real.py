"""The loop's Stop hook in real Claude Code, against tether's scripted model server.

The session's model ends its turn (a final text) every other answer; between,
it runs ``tether loop tick`` because the hook told it to. The hook decides as
a tick does: it blocks while level 2 finds work (a note in working memory),
then while level 1 has the tickets made of it, and lets the session stop on
the STOP line. Every unit ran as its own run, in a fresh session: the run
records carry distinct session ids, none of them the interactive session's.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from tests.loop.conftest import START, Project
from tests.real_harness.conftest import find_cli, load_adapter

from tether.board import State
from tether.clock import FakeClock
from tether.testing.model_server import ModelServer, client_setup
from tether.testing.model_server.scenario import Action, FinalText, Scenario, ShellCalls

pytestmark = pytest.mark.real_harness

TETHER = str(Path(sys.executable).parent / "tether")
MAX_STEPS = 14


def _alternate(step: int) -> Action:
    """Odd answers end the turn; even ones run the tick the hook asked for."""
    if step % 2 == 1 or step >= MAX_STEPS:
        return FinalText("I am done for now.")
    return ShellCalls((f"{TETHER} loop tick",))


def test_stop_hook_blocks_while_level2_finds_work_and_releases_on_stop(
    tmp_path: Path, tether_home: Path
) -> None:
    exe = find_cli(load_adapter("claude-code"))
    root = tmp_path / "proj"
    root.mkdir()
    project = Project(root=root, home=tether_home, clock=FakeClock(START))
    project.write_config()
    project.board.ensure()
    text = (project.root / "tether.toml").read_text()
    (project.root / "tether.toml").write_text(
        text.replace('guard_interval = "15m"', 'guard_interval = "15m"\nstop_hook_max_blocks = 10')
    )
    project.all_sources_ready(
        organic={
            "status": "found",
            "items": [
                {"id": "m1", "text": "Add a test for the empty config file"},
                {"id": "m2", "text": "Document the --quiet flag"},
            ],
        }
    )
    hook_log = tmp_path / "stop-hook.jsonl"
    hook = tmp_path / "stop-hook.sh"
    hook.write_text(
        "#!/bin/bash\n"
        "payload=$(cat)\n"
        f"answer=$(printf '%s' \"$payload\" | '{TETHER}' loop stop-hook --harness claude-code)\n"
        f"printf '%s\\t%s\\n' \"$payload\" \"$answer\" >> '{hook_log}'\n"
        "printf '%s' \"$answer\"\n"
    )
    hook.chmod(0o755)
    settings = tmp_path / "settings.json"
    settings.write_text(
        json.dumps(
            {
                "hooks": {
                    "Stop": [{"hooks": [{"type": "command", "command": str(hook), "timeout": 120}]}]
                }
            }
        )
    )
    scenario = Scenario("stop-hook", _alternate, last_step=None, by_turns=True)
    with ModelServer(scenario=scenario) as server:
        setup = client_setup("claude-code", tmp_path / "claude-home", server.port)
        argv = [
            str(exe),
            "-p",
            "Work on this project.",
            "--output-format",
            "stream-json",
            "--verbose",
            "--settings",
            str(settings),
            *setup.extra_args,
        ]
        node_dir = Path(shutil.which("node") or "/usr/bin/node").parent
        env = {
            **project.env(),
            "PATH": os.pathsep.join([str(node_dir), *map(str, project.path_dirs), os.defpath]),
            **setup.env,
        }
        done = subprocess.run(
            argv,
            cwd=project.root,
            env=env,
            capture_output=True,
            timeout=600,
            check=False,
        )
        requests = server.requests
    why = (
        f"rc={done.returncode}\nstderr={done.stderr.decode(errors='replace')[-2000:]}\n"
        f"hook log={hook_log.read_text() if hook_log.exists() else ''}"
    )
    assert done.returncode == 0, why
    answers = [line.split("\t", 1) for line in hook_log.read_text().splitlines()]
    decisions = [json.loads(a) if a.strip() else {} for _, a in answers]
    blocks = [d for d in decisions if d.get("decision") == "block"]
    # blocked first because level 2 found work (level 1 had none) ...
    assert "level 2 found new work (memory.organic: found" in blocks[0]["reason"], why
    assert all("Do not do this unit in this session" in b["reason"] for b in blocks)
    assert all("`tether loop tick`" in b["reason"] for b in blocks)
    # ... then while level 1 had the INBOX notes and the tickets made of them
    assert any("INBOX has 2 untriaged entries" in b["reason"] for b in blocks), why
    assert sum("ACTIONABLE" in b["reason"] for b in blocks) == 2, why
    # ... and released on the STOP line, which is printed
    assert decisions[-1].get("systemMessage", "").startswith("TETHER-LOOP: STOP (exhausted)"), why
    assert len(blocks) == len(decisions) - 1
    payloads = [json.loads(p) for p, _ in answers]
    session = payloads[0]["session_id"]
    assert [p["stop_hook_active"] for p in payloads[1:]] == [True] * (len(payloads) - 1)

    # the units ran as runs of their own, each in a fresh session
    from tether.store import connect
    from tether.store.runs import list_runs

    conn = connect(project.home)
    runs = list_runs(conn)
    conn.close()
    assert len(runs) == 2, why
    sessions = {r.session_id for r in runs}
    assert len(sessions) == 2 and session not in sessions
    done_tickets = project.board.load().in_state(State.DONE)
    assert sorted(t.title for t in done_tickets) == [
        "Add a test for the empty config file",
        "Document the --quiet flag",
    ]
    assert len([r for r in requests if r.kind == "agent"]) == len(decisions) * 2 - 1
