"""The evidence-based loop: keep working as far as possible, stop only with evidence.

What a tick does, level by level: docs/reference/loop.md.

    from tether.loop import open_loop, tick, run_loop
    loop = open_loop(project_dir)
    print(tick(loop).line)

Level 1 looks for visible work (INBOX triage, tickets, checks, dates, TODO
items, routines, unfinished runs) and does one unit per tick; level 2 asks
four sources only when level 1 found nothing; a guard keeps it from asking
them again when nothing changed. Every tick ends with one signal line.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tether.loop.context import Loop, LoopBusyError, LoopError, ProfileChoice, open_loop
    from tether.loop.runner import RunResult, run_loop
    from tether.loop.signal import Signal, render
    from tether.loop.tick import TickResult, tick

# The names below load on first use, so that reading one of the loop's records
# (``tether status``, the dashboard) does not import the whole loop.
_HOMES = {
    "Loop": "context",
    "LoopBusyError": "context",
    "LoopError": "context",
    "open_loop": "context",
    "ProfileChoice": "context",
    "RunResult": "runner",
    "run_loop": "runner",
    "Signal": "signal",
    "render": "signal",
    "TickResult": "tick",
    "tick": "tick",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'tether.loop' has no attribute {name!r}")
    return getattr(importlib.import_module(f"tether.loop.{home}"), name)


class _Package(types.ModuleType):
    """``tether.loop.tick`` is the function, as if imported eagerly.

    Importing a submodule binds it on its package; for ``tick`` that would hide
    the function of the same name (``from tether.loop import tick`` would give
    the module once anything imported ``tether.loop.tick`` first).
    """

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, types.ModuleType) and _HOMES.get(name) == name:
            value = getattr(value, name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package

__all__ = [
    "Loop",
    "LoopBusyError",
    "LoopError",
    "ProfileChoice",
    "RunResult",
    "Signal",
    "TickResult",
    "open_loop",
    "render",
    "run_loop",
    "tick",
]
