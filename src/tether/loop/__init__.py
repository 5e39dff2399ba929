"""The evidence-based loop (SPEC C): keep working as far as possible, stop only with evidence.

    from tether.loop import open_loop, tick, run_loop
    loop = open_loop(project_dir)
    print(tick(loop).line)

Level 1 looks for visible work (INBOX triage, tickets, checks, dates, TODO
items, routines, unfinished runs) and does one unit per tick; level 2 asks
four sources only when level 1 found nothing; a guard keeps it from asking
them again when nothing changed. Every tick ends with one signal line.
"""

from __future__ import annotations

from tether.loop.context import Loop, LoopBusyError, LoopError, open_loop
from tether.loop.runner import RunResult, run_loop
from tether.loop.signal import Signal, render
from tether.loop.tick import TickResult, tick

__all__ = [
    "Loop",
    "LoopBusyError",
    "LoopError",
    "RunResult",
    "Signal",
    "TickResult",
    "open_loop",
    "render",
    "run_loop",
    "tick",
]
