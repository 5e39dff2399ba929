"""A room's second belt: the harness's own allow-list, with no gate hook installed.

Each real CLI runs with the allow-list a room's run gets (``room_allowance``,
made from the room rule's one list) and nothing else: no hook, no extension,
no blanket grant from the offline setup. The scripted model then tries to read
a page file around the budget and reads another page the room's way.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tether.room.room import room_allowance
from tether.testing.model_server.scenario import Action, FinalText, NamedCall, Scenario, ShellCalls

# Vibe alone starts in 20-65 s on a loaded machine
pytestmark = [pytest.mark.real_harness, pytest.mark.timeout(300)]
RunAgent = Callable[..., Any]

SECRET = "secret-alpha-7731"  # only in Alpha.md: never to reach the agent
OPEN = "open-beta-4420"  # only in Beta.md: read with `tether wiki read Beta`
BIN = Path(sys.executable).parent
# what each CLI may still offer the model (Claude Code: a placeholder for deferred tools)
OFFERED = {
    "claude-code": {"Bash", "Write", "TodoWrite", "DeferredToolPlaceholder"},
    "copilot": {"bash", "create"},
}  # Vibe 2.26 offers every tool whatever --enabled-tools says; its read_file asks, and -p
# has nobody to answer


def _wiki(root: Path) -> Path:
    wiki = root / "vault"
    wiki.mkdir(parents=True)
    (wiki / "Alpha.md").write_text(f"# Alpha\n\n{SECRET}\n", encoding="utf-8")
    (wiki / "Beta.md").write_text(f"# Beta\n\n{OPEN}\n", encoding="utf-8")
    return wiki


def _run(harness: str, steps: list[Action], tmp_path: Path, run_agent: RunAgent) -> Any:
    wiki = _wiki(tmp_path)
    room = tmp_path / "room"
    room.mkdir()

    def action(step: int) -> Action:
        return steps[step - 1] if step <= len(steps) else FinalText("Room done.")

    node = Path(shutil.which("node") or "/usr/bin/node").parent
    env = {
        "PATH": os.pathsep.join([str(BIN), str(node), os.environ.get("PATH", os.defpath)]),
        "TETHER_WIKI_ROOT": str(wiki),
        "TETHER_HOME": str(tmp_path / "tether-home"),
    }
    scenario = Scenario("room-belt", action, last_step=len(steps) + 1)
    return run_agent(harness, scenario, extra_env=env, allow=room_allowance(room, env))


READ_TOOL = {"claude-code": "Read", "copilot": "view", "vibe": "read_file"}
READ_ARG = {"claude-code": "file_path", "copilot": "path", "vibe": "path"}


def _tether(harness: str) -> str:
    """How the agent calls tether: by name, as a room's prompt says; Vibe's shell starts as
    a login shell whose PATH lacks the venv (the allow-list names both forms)."""
    return str(BIN / "tether") if harness == "vibe" else "tether"


def _offered(run: Any) -> set[str]:
    return {name for r in run.requests if r.kind == "agent" for name in r.tool_names}


@pytest.mark.slow
@pytest.mark.parametrize("harness", ["claude-code", "copilot", "vibe"])
def test_a_cat_of_a_page_is_not_executed_and_the_room_s_read_works(
    harness: str, tmp_path: Path, run_agent: RunAgent
) -> None:
    leak = tmp_path / "leaked.md"
    alpha = tmp_path / "vault" / "Alpha.md"
    run = _run(
        harness,
        [
            ShellCalls((f"cat {alpha}",)),
            ShellCalls((f"cat {alpha} > {leak}",)),
            ShellCalls((f"{_tether(harness)} wiki read Beta",)),
            NamedCall(READ_TOOL[harness], ((READ_ARG[harness], str(alpha)),)),
        ],
        tmp_path,
        run_agent,
    )
    out = run.stdout.decode("utf-8", "replace")
    assert run.returncode == 0, run.explain()
    actions = [r.action for r in run.requests if r.kind == "agent"]
    assert actions[:3] == ["tool_calls"] * 3, run.explain()
    assert not leak.exists()  # the redirect never ran
    assert SECRET not in out  # nor did the plain cat: the page's text never reached the agent
    assert OPEN in out, run.explain()  # the room's own read ran
    if harness in OFFERED:  # no read, grep, glob or edit tool is offered at all
        assert _offered(run) <= OFFERED[harness], run.explain()
        assert actions[3] == "no_such_tool", run.explain()


@pytest.mark.slow
@pytest.mark.parametrize("pi", ["pi", "pi-1"])
def test_pi_offers_only_bash_and_write_so_its_read_tool_cannot_open_a_page(
    pi: str, tmp_path: Path, run_agent: RunAgent
) -> None:
    """Pi's allow-list names whole tools: its read tool is gone, ``bash`` stays whole
    (the gate's extension narrows it); Pi 0.73 and Pi 1.x alike."""
    alpha = tmp_path / "vault" / "Alpha.md"
    run = _run(
        pi,
        [
            ShellCalls(("tether wiki read Beta",)),
            NamedCall("read", (("path", str(alpha)),)),
        ],
        tmp_path,
        run_agent,
    )
    out = run.stdout.decode("utf-8", "replace")
    assert OPEN in out, run.explain()
    assert SECRET not in out
    assert _offered(run) == {"bash", "write"}, run.explain()
    assert [r.action for r in run.requests if r.kind == "agent"][:2] == [
        "tool_calls",
        "no_such_tool",
    ], run.explain()
