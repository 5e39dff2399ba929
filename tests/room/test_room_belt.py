"""The room's second belt is made from the gate's one rule, per harness in its adapter."""

from __future__ import annotations

import shlex
from pathlib import Path

from tether.gate.roomrule import ROOM_COMMANDS, allowed_command
from tether.harnesses import get_harness
from tether.harnesses.base import RunSpec
from tether.room.room import room_allowance


def test_the_allowance_is_the_room_rule_s_commands_and_its_conclusion(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    tether = bin_dir / "tether"
    tether.write_text("#!/bin/sh\n")
    tether.chmod(0o755)
    allow = room_allowance(tmp_path / "room", {"PATH": str(bin_dir)})
    assert set(allow.commands) == {
        (program, *command) for program in ("tether", str(tether)) for command in ROOM_COMMANDS
    }
    assert allow.write_file == (tmp_path / "room").resolve() / "conclusion.md"
    for prefix in allow.commands:  # what the belt lets through, the gate lets through too
        assert allowed_command(shlex.join([*prefix, "page-1"]))


def test_each_adapter_passes_the_allowance_in_its_own_flags(tmp_path: Path) -> None:
    allow = room_allowance(tmp_path / "room", {"PATH": ""})
    conclusion = str(allow.write_file)

    def argv(harness: str) -> list[str]:
        return get_harness(harness).build_command(RunSpec(prompt="p", allow=allow))

    claude = argv("claude-code")
    assert claude[claude.index("--permission-mode") + 1] == "dontAsk"
    assert {"Bash(tether wiki read:*)", "Bash(tether room conclude:*)"} <= set(claude)
    assert f"Edit(/{conclusion})" in claude
    copilot = argv("copilot")
    assert "--available-tools=bash,create" in copilot
    assert "--allow-tool=shell(tether:*)" in copilot
    assert f"--allow-tool=write({conclusion})" in copilot
    pi = argv("pi")
    assert pi[pi.index("--tools") + 1] == "bash,write"
    vibe = argv("vibe")
    assert vibe[0] == "env" and any(
        a.startswith("VIBE_TOOLS=") and '"tether wiki read"' in a for a in vibe
    )
    assert vibe.count("--enabled-tools") == 2
    # Codex has no allow-list of its own: its argv is the same with or without one
    codex = get_harness("codex")
    assert codex.build_command(RunSpec(prompt="p", allow=allow)) == codex.build_command(
        RunSpec(prompt="p")
    )
