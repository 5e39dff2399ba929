"""The state folders of the board and the reasons below four of them (docs/reference/board.md)."""

from __future__ import annotations

import re
from enum import StrEnum
from pathlib import PurePosixPath

from tether.board.errors import BoardError


class State(StrEnum):
    """A state is a folder under the board root; its value is the folder name."""

    INBOX = "INBOX"
    ACTIONABLE = "ACTIONABLE"
    BLOCKED = "BLOCKED"
    WAITING = "WAITING"
    USER = "USER"
    PARKED = "PARKED"
    DONE = "DONE"


REASONS: dict[State, tuple[str, ...]] = {
    State.BLOCKED: ("host-receipt", "foreign-state", "lock", "quota", "dependency"),
    State.WAITING: ("scheduled", "review-due", "marker"),
    State.USER: ("decision", "data", "approval", "hardware", "session"),
    State.PARKED: ("skip", "backlog", "until-trigger"),
}

PRIORITIES = ("P1", "P2", "P3")

# T-YYYYMMDD-NNNNNNNNN: the creation date, then nine random digits.
TICKET_ID = re.compile(r"T-[0-9]{8}-[0-9]{9}")

# Front matter keys that belong to one state only; a move away drops them.
STATE_KEYS: dict[State, tuple[str, ...]] = {
    State.BLOCKED: ("blocked_by", "check"),
    State.WAITING: ("until", "marker"),
    State.USER: ("needs",),
    State.PARKED: ("until", "marker"),
}
ALL_STATE_KEYS = ("blocked_by", "check", "until", "marker", "needs")


def is_ticket_id(text: object) -> bool:
    return isinstance(text, str) and TICKET_ID.fullmatch(text) is not None


def parse_state(text: str) -> tuple[State, str | None]:
    """``"BLOCKED/lock"``, ``"blocked"``, ``"done"`` -> (state, reason); reason checked."""
    name, _, reason = text.strip().strip("/").partition("/")
    try:
        state = State(name.upper())
    except ValueError:
        known = ", ".join(s.value for s in State)
        raise BoardError(f"unknown state {name!r}; the states are {known}.") from None
    return state, check_reason(state, reason or None)


def check_reason(state: State, reason: str | None) -> str | None:
    """The reason if it is one of the state's reasons; states without reasons take none."""
    allowed = REASONS.get(state)
    if allowed is None:
        if reason is not None:
            raise BoardError(f"{state.value} has no reason folders; drop {reason!r}.")
        return None
    if reason is None:
        raise BoardError(
            f"{state.value} needs a reason, one of: {', '.join(allowed)} "
            f"(e.g. {state.value}/{allowed[0]})."
        )
    if reason not in allowed:
        raise BoardError(
            f"unknown reason {reason!r} for {state.value}; use one of: {', '.join(allowed)}."
        )
    return reason


def folder_of(state: State, reason: str | None) -> PurePosixPath:
    """The folder of a state (and reason), relative to the board root."""
    reason = check_reason(state, reason)
    return PurePosixPath(state.value, reason) if reason else PurePosixPath(state.value)


def all_folders() -> list[tuple[State, str | None]]:
    """Every leaf folder a ticket may live in, in board order."""
    leaves: list[tuple[State, str | None]] = []
    for state in State:
        reasons = REASONS.get(state)
        if reasons is None:
            leaves.append((state, None))
        else:
            leaves.extend((state, reason) for reason in reasons)
    return leaves


def label(state: State, reason: str | None) -> str:
    return f"{state.value}/{reason}" if reason else state.value
