"""``tether loop run``: tick until a STOP, one unit per fresh session, one after the other.

Each tick does at most one unit (one atomic run, never two units in one
session, never two runs at once). Ctrl-C during a run cancels that run through
the supervisor, which records it (with a report); the loop then stops without
starting another tick. Ctrl-C between runs stops at once.

A run that only demonstrated (the built-in scripted agent nobody chose) also
ends the loop: nothing was recorded, so the next tick would find the same unit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tether.core.exit_codes import ExitCode
from tether.loop.tick import TickResult, tick

if TYPE_CHECKING:
    from tether.loop.context import Loop


@dataclass
class RunResult:
    ticks: list[TickResult] = field(default_factory=list)
    interrupted: bool = False
    reason: str = ""  # why it ended

    @property
    def last(self) -> TickResult | None:
        return self.ticks[-1] if self.ticks else None

    @property
    def exit_code(self) -> ExitCode:
        if self.interrupted:
            return ExitCode.RUN_CANCELLED
        return self.last.exit_code if self.last is not None else ExitCode.OK


def run_loop(
    loop: Loop,
    *,
    max_ticks: int | None = None,
    on_tick: Callable[[int, TickResult], None] | None = None,
) -> RunResult:
    limit = max_ticks if max_ticks is not None else loop.settings.max_ticks
    result = RunResult()
    try:
        with loop.exclusive():
            _ticks(loop, limit, on_tick, result)
    except KeyboardInterrupt:
        result.interrupted = True
        result.reason = "interrupted between runs"
    return result


def _ticks(
    loop: Loop, limit: int, on_tick: Callable[[int, TickResult], None] | None, result: RunResult
) -> None:
    for number in range(1, limit + 1):
        current = tick(loop)
        result.ticks.append(current)
        if on_tick is not None:
            on_tick(number, current)
        if current.dispatched is not None and current.dispatched.cancelled:
            result.interrupted = True
            result.reason = f"run {current.dispatched.run_id} was cancelled and recorded"
            return
        if current.signal.is_stop:
            result.reason = "stop"
            return
        if current.dispatched is not None and current.dispatched.demonstration:
            result.reason = (
                "the run was a demonstration by the built-in scripted agent; "
                "configure a profile to let the loop work"
            )
            return
    result.reason = f"--max-ticks {limit} reached"
