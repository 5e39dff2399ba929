"""Harness adapters and their registry.

The registry is a plain lazy dict: an adapter module is imported only when its
harness is asked for. Third-party adapters register through the entry-point
group ``tether.harnesses`` (value: ``module:Class``).
"""

from __future__ import annotations

import importlib
from functools import cache
from typing import TYPE_CHECKING

from tether.errors import UnknownNameError

if TYPE_CHECKING:
    from tether.harnesses.base import Harness

BUILTIN: dict[str, str] = {
    "claude-code": "tether.harnesses.claude_code:ClaudeCodeHarness",
    "codex": "tether.harnesses.codex:CodexHarness",
    "copilot": "tether.harnesses.copilot:CopilotHarness",
    "pi": "tether.harnesses.pi:PiHarness",
    "vibe": "tether.harnesses.vibe:VibeHarness",
    "scripted": "tether.harnesses.scripted:ScriptedHarness",
}


@cache
def _plugins() -> dict[str, str]:
    # Imported here: importlib.metadata costs ~45 ms, and most lookups are built-ins.
    from importlib.metadata import entry_points

    return {ep.name: ep.value for ep in entry_points(group="tether.harnesses")}


def known_names() -> list[str]:
    return sorted({*BUILTIN, *_plugins()})


def get_harness(name: str) -> Harness:
    """An adapter instance by its registry name (the CLI's own name)."""
    target = BUILTIN.get(name) or _plugins().get(name)
    if target is None:
        raise UnknownNameError("harness", name, known_names())
    module_name, _, attr = target.partition(":")
    cls = getattr(importlib.import_module(module_name), attr)
    harness: Harness = cls()
    return harness
