"""One count per call, whatever hook files hold the gate.

Copilot CLI 1.0.102 runs, for one tool call, every hook file it reads: its own
``preToolUse`` hooks (``.github/hooks/*.json``, ``~/.copilot/hooks/``, a
``--plugin-dir`` plugin) and the ``PreToolUse`` hooks of ``.claude/settings.json``,
all at the same instant. The payloads below are the shapes it sent (recorded
with a logging hook in each file, Copilot 1.0.102 against the scripted model
server): no call id, the same timestamp (epoch milliseconds in its own shape,
ISO text in the Claude Code one), the same input.
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.gate.gate_support import run_gate

from tether.gate.counter import session_status

SESSION = "7bbe607d-6fc9-4c78-aaad-5aed545d0952"


def _copilot(step: int, millis: int) -> dict[str, Any]:
    return {
        "sessionId": SESSION,
        "timestamp": millis,
        "cwd": "/tmp/work",
        "toolName": "bash",
        "toolArgs": {"command": f"echo step {step}", "description": f"mock step {step}"},
    }


def _claude_shape(step: int, millis: int) -> dict[str, Any]:
    seconds, ms = divmod(millis, 1000)
    iso = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{ms:03d}Z"
    return {
        "hook_event_name": "PreToolUse",
        "session_id": SESSION,
        "timestamp": iso,
        "cwd": "/tmp/work",
        "tool_name": "Bash",
        "tool_input": {"description": f"mock step {step}", "command": f"echo step {step}"},
    }


# Each hook file as Copilot runs it: (argv after the gate, payload maker).
HOOK_FILES: dict[str, tuple[list[str], Callable[[int, int], dict[str, Any]]]] = {
    "copilot project hooks": (["hook", "--harness", "copilot", "--event", "preToolUse"], _copilot),
    "copilot user hooks": (["hook", "--harness", "copilot", "--event", "preToolUse"], _copilot),
    "tether run plugin": (["hook", "--harness", "copilot", "--event", "preToolUse"], _copilot),
    ".claude/settings.json": (["hook", "--harness", "claude-code"], _claude_shape),
}
COMBINATIONS = [
    combo
    for size in range(1, len(HOOK_FILES) + 1)
    for combo in itertools.combinations(HOOK_FILES, size)
]


@pytest.mark.slow
@pytest.mark.parametrize("files", COMBINATIONS, ids=lambda c: "+".join(c))
def test_each_call_counts_once_whichever_hook_files_deliver_it(
    files: tuple[str, ...], tether_home: Path, env_for: Callable[..., Any], gate_exe: str
) -> None:
    start = 1796126271329
    for step in range(1, 6):
        millis = start + 137 * step
        for name in files:
            argv, make = HOOK_FILES[name]
            done = run_gate(gate_exe, argv, env_for(), json.dumps(make(step, millis)))
            assert done.returncode == 0, done.stderr
    assert session_status(tether_home, SESSION).calls_used == 5


def test_budget_10_allows_exactly_10_calls_with_the_gate_in_both_formats(
    tether_home: Path, env_for: Callable[..., Any], gate_exe: str
) -> None:
    env = {**env_for(), "TETHER_GATE_BUDGET": "10"}
    allowed = 0
    for step in range(1, 15):
        millis = 1796126271329 + 200 * step
        answers = []
        for name in ("copilot project hooks", ".claude/settings.json"):
            argv, make = HOOK_FILES[name]
            answers.append(run_gate(gate_exe, argv, env, json.dumps(make(step, millis))).stdout)
        denied = [b"deny" in a for a in answers]
        assert denied[0] == denied[1], answers  # both files give the same answer
        allowed += not denied[0]
    assert allowed == 10


def test_two_different_calls_at_the_same_instant_count_twice(
    tether_home: Path, env_for: Callable[..., Any], gate_exe: str
) -> None:
    argv, make = HOOK_FILES["copilot project hooks"]
    for step in (1, 2):
        run_gate(gate_exe, argv, env_for(), json.dumps(make(step, 1796126271329)))
    assert session_status(tether_home, SESSION).calls_used == 2
