"""The names of the harnesses tether can drive, and where each adapter lives.

A plain table of ``"module:Class"`` strings (nothing is imported here), so the
configuration can check a profile's harness without loading any adapter;
``tether.harnesses.get_harness`` imports one when it is asked for. Third-party
adapters register through the entry-point group ``tether.harnesses``.
"""

from __future__ import annotations

from functools import cache

BUILTIN: dict[str, str] = {
    "claude-code": "tether.harnesses.claude_code:ClaudeCodeHarness",
    "codex": "tether.harnesses.codex:CodexHarness",
    "copilot": "tether.harnesses.copilot:CopilotHarness",
    "pi": "tether.harnesses.pi:PiHarness",
    "vibe": "tether.harnesses.vibe:VibeHarness",
    "scripted": "tether.harnesses.scripted:ScriptedHarness",
}


@cache
def plugins() -> dict[str, str]:
    """Adapters other packages registered (entry-point group ``tether.harnesses``)."""
    # Imported here: importlib.metadata costs ~45 ms, and most lookups are built-ins.
    from importlib.metadata import entry_points

    return {ep.name: ep.value for ep in entry_points(group="tether.harnesses")}


def known_names() -> list[str]:
    return sorted({*BUILTIN, *plugins()})
