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

from typing import TYPE_CHECKING

from tether.core.lazy_package import lazy_names

if TYPE_CHECKING:
    from tether.loop.context import Loop, LoopBusyError, LoopError, ProfileChoice, open_loop
    from tether.loop.runner import RunResult, run_loop
    from tether.loop.signal import Signal, render
    from tether.loop.tick import TickResult, tick

# The names below load on first use, so that reading one of the loop's records
# (``tether status``, the dashboard) does not import the whole loop.
lazy_names(
    __name__,
    {
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
    },
)

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
