"""The six signal lines a tick ends with, and their exit codes (docs/reference/signal-lines.md).

``CONTINUE`` is the only signal on which an outer loop starts another tick.
``exhausted`` and ``blind`` never share a line or an exit code.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from enum import StrEnum

from tether.core.exit_codes import ExitCode

PREFIX = "TETHER-LOOP:"
ROLE_COUNT = 4


class Signal(StrEnum):
    CONTINUE = "continue"
    EXHAUSTED = "exhausted"
    BLIND = "blind"
    GUARD_EXHAUSTED = "guard-exhausted"
    GUARD_BLIND = "guard-blind"
    USER_ONLY = "user-only"

    @property
    def exit_code(self) -> ExitCode:
        return _EXIT[self]

    @property
    def is_stop(self) -> bool:
        return self is not Signal.CONTINUE


_EXIT = {
    Signal.CONTINUE: ExitCode.OK,
    Signal.EXHAUSTED: ExitCode.LOOP_STOP_EXHAUSTED,
    Signal.BLIND: ExitCode.LOOP_STOP_BLIND,
    Signal.GUARD_EXHAUSTED: ExitCode.LOOP_STOP_GUARD_EXHAUSTED,
    Signal.GUARD_BLIND: ExitCode.LOOP_STOP_GUARD_BLIND,
    Signal.USER_ONLY: ExitCode.LOOP_STOP_USER_ONLY,
}


def since_text(moment: datetime) -> str:
    """The time in a guard line: UTC to the second, ``2025-01-01T10:00:00Z``."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def render(
    signal: Signal, *, unavailable: Sequence[str] = (), since: datetime | None = None
) -> str:
    """The signal line, verbatim as docs/reference/signal-lines.md lists it."""
    if signal is Signal.CONTINUE:
        return f"{PREFIX} CONTINUE — level 1 did work, the loop goes on."
    if signal is Signal.EXHAUSTED:
        return f"{PREFIX} STOP (exhausted) — all 4 sources asked, all empty. Proven: no work left."
    if signal is Signal.BLIND:
        if not unavailable:
            raise ValueError("a blind stop names the unavailable roles")
        roles = ", ".join(unavailable)
        return (
            f"{PREFIX} STOP (blind, {len(unavailable)}/{ROLE_COUNT} sources unavailable: "
            f"{roles}) — at least one source unavailable. Not proven, only not checkable."
        )
    if signal is Signal.GUARD_EXHAUSTED:
        return (
            f"{PREFIX} STOP (guard, exhausted unchanged since {_since(since)}) — guard active, "
            f"still exhausted, no new trigger."
        )
    if signal is Signal.GUARD_BLIND:
        return (
            f"{PREFIX} STOP (guard, blind unchanged since {_since(since)}) — guard active, "
            f"still blind, no source became available."
        )
    return f"{PREFIX} STOP (user-only) — only USER/* items left, presented as one bundle."


def _since(since: datetime | None) -> str:
    if since is None:
        raise ValueError("a guard stop names the time of the result it repeats")
    return since_text(since)
