"""A tick and the Stop hook load only what their common path needs (speed: bench/cli_start.py).

Every agent's end of a turn starts ``tether loop stop-hook`` and every loop step a
``tether loop tick``: a fresh process each time, whose start-up is mostly imports.
Over a board with one ticket to start (a dry run, as the Stop hook's tick is) and
over an empty board (the tick that proves there is no work left), nothing runs a
command, recovers a run, counts an event stream, writes a person's decision, reads
a sandbox host or parses YAML, so none of their modules is loaded.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.support.loaded import tether_loaded

from tether.board import Board, State

NOT_NEEDED = (
    "subprocess",  # a command source, a check, a routine: tether.loop.commands
    "tether.loop.commands",
    "tether.loop.proposals",  # the tickets of a recovered run
    "tether.outbox",
    "tether.events.accounting",  # a run's counting (tether.runs.budget needs it only there)
    "tether.sandbox.hosts",  # [sandbox] allow_hosts, when there are any
    "secrets",  # ids and temp names come from os.urandom
    "socket",  # the host name of a person's decision or a session stamp written
    "getpass",
    "yaml",  # tickets tether wrote are read by the fast reader
)
# Level 2 and the person's bundle: asked only when level 1 finds no work.
NOT_NEEDED_WITH_WORK = ("tether.loop.level2", "tether.loop.guard", "tether.loop.user_bundle")
PROFILE = '[profiles.bench]\nharness = "scripted"\nargs = ["--steps", "1"]\ndefault = true\n'


def _project(root: Path, *, ticket: bool) -> Path:
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "tether.toml").write_text(PROFILE, encoding="utf-8")
    board = Board(root / "tickets", root)
    board.ensure()
    if ticket:
        board.add("Fix the typo", state=State.ACTIONABLE)
    return root


def _extra(loaded: set[str], not_needed: tuple[str, ...] = NOT_NEEDED) -> set[str]:
    """The loaded modules that are, or are inside, one of ``not_needed``."""
    return {m for m in loaded if any(m == n or m.startswith(f"{n}.") for n in not_needed)}


def test_a_dry_tick_and_the_stop_hook_over_a_ticket_load_no_command_runner(
    tmp_path: Path, tether_home: Path
) -> None:
    root = _project(tmp_path / "project", ticket=True)
    out, loaded = tether_loaded(root, "loop", "tick", "--dry-run")
    assert "would start a run" in out
    assert not _extra(loaded, NOT_NEEDED + NOT_NEEDED_WITH_WORK)
    payload = {
        "session_id": "lean",
        "transcript_path": "/dev/null",
        "cwd": str(root),
        "hook_event_name": "Stop",
        "stop_hook_active": False,
    }
    out, loaded = tether_loaded(
        root, "loop", "stop-hook", "--harness", "claude-code", stdin=json.dumps(payload)
    )
    assert json.loads(out)["decision"] == "block"  # the ticket is work: keep going
    assert not _extra(loaded, NOT_NEEDED + NOT_NEEDED_WITH_WORK)


def test_a_tick_that_proves_no_work_is_left_loads_no_recovery_and_no_counting(
    tmp_path: Path, tether_home: Path
) -> None:
    root = _project(tmp_path / "project", ticket=False)
    out, loaded = tether_loaded(root, "loop", "tick", exit_code=10)
    assert "STOP (exhausted)" in out
    assert not _extra(loaded)
