"""Helpers for the room tests: the tether command and a scripted room profile."""

from __future__ import annotations

import sys
from pathlib import Path

TETHER = str(Path(sys.executable).parent / "tether")


def room_question(word: str) -> str:
    """A question about a generated page that finds it and more pages by their words.

    "What is X?" alone finds only X's page by its words: read directly, no room.
    """
    return f"What is {word} and what does it depend on?"


def write_profile(project: Path, commands: list[str] | None, *extra: str) -> None:
    """A tether.toml whose default profile is the scripted agent running ``commands``."""
    import json

    args = ["--format", "claude-code", *extra]
    if commands is not None:
        script = project / "room-commands.txt"
        script.write_text("\n".join(commands) + "\n", encoding="utf-8")
        args += ["--commands-file", str(script)]
    (project / "tether.toml").write_text(
        'kill_grace_seconds = 0.5\n\n[profiles.room]\nharness = "scripted"\n'
        f"args = {json.dumps(args)}\ndefault = true\n",
        encoding="utf-8",
    )
