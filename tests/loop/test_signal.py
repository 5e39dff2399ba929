"""The six signal lines, verbatim as docs/reference/signal-lines.md lists them, and their
exit codes."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tether.core.exit_codes import ExitCode
from tether.loop.signal import Signal, render

SINCE = datetime(2026, 3, 2, 9, 15, 7, 123456, tzinfo=UTC)


def test_continue() -> None:
    assert render(Signal.CONTINUE) == (
        "TETHER-LOOP: CONTINUE — level 1 did work, the loop goes on."
    )


def test_exhausted() -> None:
    assert render(Signal.EXHAUSTED) == (
        "TETHER-LOOP: STOP (exhausted) — all 4 sources asked, all empty. Proven: no work left."
    )


def test_blind_names_the_unavailable_roles() -> None:
    assert render(Signal.BLIND, unavailable=["memory.organic", "memory.curated"]) == (
        "TETHER-LOOP: STOP (blind, 2/4 sources unavailable: memory.organic, memory.curated) "
        "— at least one source unavailable. Not proven, only not checkable."
    )
    assert render(Signal.BLIND, unavailable=["user.model"]) == (
        "TETHER-LOOP: STOP (blind, 1/4 sources unavailable: user.model) "
        "— at least one source unavailable. Not proven, only not checkable."
    )


def test_guard_exhausted() -> None:
    assert render(Signal.GUARD_EXHAUSTED, since=SINCE) == (
        "TETHER-LOOP: STOP (guard, exhausted unchanged since 2026-03-02T09:15:07Z) "
        "— guard active, still exhausted, no new trigger."
    )


def test_guard_blind() -> None:
    assert render(Signal.GUARD_BLIND, since=SINCE) == (
        "TETHER-LOOP: STOP (guard, blind unchanged since 2026-03-02T09:15:07Z) "
        "— guard active, still blind, no source became available."
    )


def test_user_only() -> None:
    assert render(Signal.USER_ONLY) == (
        "TETHER-LOOP: STOP (user-only) — only USER/* items left, presented as one bundle."
    )


@pytest.mark.parametrize(
    ("signal", "code"),
    [
        (Signal.CONTINUE, ExitCode.OK),
        (Signal.EXHAUSTED, 10),
        (Signal.BLIND, 11),
        (Signal.GUARD_EXHAUSTED, 12),
        (Signal.GUARD_BLIND, 13),
        (Signal.USER_ONLY, 14),
    ],
)
def test_exit_codes(signal: Signal, code: int) -> None:
    assert int(signal.exit_code) == code
    assert signal.is_stop is (signal is not Signal.CONTINUE)


def test_exhausted_and_blind_never_share_a_line_or_a_code() -> None:
    blind = render(Signal.BLIND, unavailable=["user.model"])
    assert "exhausted" not in blind
    assert Signal.BLIND.exit_code != Signal.EXHAUSTED.exit_code
    assert Signal.GUARD_BLIND.exit_code != Signal.GUARD_EXHAUSTED.exit_code


def test_a_blind_line_without_roles_or_a_guard_line_without_time_is_refused() -> None:
    with pytest.raises(ValueError, match="names the unavailable roles"):
        render(Signal.BLIND)
    with pytest.raises(ValueError, match="names the time"):
        render(Signal.GUARD_BLIND)
