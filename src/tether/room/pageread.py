"""Reading one wiki page: inside a room it counts against the room's budget B.

``tether wiki read`` and the ``wiki_read`` MCP tool both read through here, so
a read is counted (and refused beyond B or off the list) the same way whichever
way it comes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tether.config import load_config
from tether.core.errors import UsageError
from tether.room.room import room_above
from tether.room.state import (
    MISSING,
    REFUSED_BUDGET,
    REFUSED_LIST,
    REFUSED_NOT_PAGE,
    Room,
    RoomRefusedError,
)


@dataclass(frozen=True)
class PageRead:
    page_id: str
    text: str
    room: str | None = None
    used: int | None = None
    budget: int | None = None

    def room_note(self) -> str | None:
        """``room: ID (U of B pages read)`` for a read a room counted, else None."""
        if self.room is None:
            return None
        return f"room: {self.page_id} ({self.used} of {self.budget} pages read)"


def current_room() -> Room | None:
    """The room this process runs in: by its variables, or by its ancestry when they
    were removed."""
    room = Room.from_env()
    if room is not None:
        return room
    home = load_config().home
    room_id = room_above(home)
    return None if room_id is None else Room.find(home, room_id)


def _read_in_room(room: Room, page_id: str) -> PageRead:
    result = room.read_page(page_id)
    if result.outcome == REFUSED_BUDGET:
        raise RoomRefusedError(
            f"refused: budget reached ({result.used} of {result.budget} pages read); "
            f"{page_id!r} is not read. Write `budget reached, not read: <list>` in the "
            f"conclusion."
        )
    if result.outcome == REFUSED_NOT_PAGE:
        listed = ", ".join(p.id for p in room.pages)
        raise RoomRefusedError(
            f"refused: {page_id!r} names no page of this room's brief; read only the "
            f"listed pages ({listed})."
        )
    if result.outcome == REFUSED_LIST:
        listed = ", ".join(p.id for p in room.pages)
        raise RoomRefusedError(f"refused: {page_id!r} is not on this room's page list ({listed}).")
    if result.outcome == MISSING:
        raise UsageError(
            f"page {page_id!r} is on the list but its file cannot be read; "
            f"write `missing: {page_id}` in the conclusion."
        )
    return PageRead(
        result.page_id or page_id, result.text or "", room.id, result.used, result.budget
    )


def read_page(page_id: str, outside: Callable[[str], tuple[Path | None, str]]) -> PageRead:
    """Page ``page_id``'s file; inside a room the read is counted (or refused).

    ``outside(page_id)`` finds the page when no room runs: its file (None when
    there is no such page) and the wiki's root, for the message.
    """
    room = current_room()
    if room is not None:
        return _read_in_room(room, page_id)
    file, where = outside(page_id)
    if file is None:
        raise UsageError(f"no page {page_id!r} in {where}; `tether wiki search` finds pages.")
    return PageRead(page_id, file.read_text("utf-8", "replace"))
