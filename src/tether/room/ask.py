"""Opening a room (W03) and what its status means (W04).

``tether room open`` and the ``room_open`` MCP tool both call these, so the
nesting rule and the meaning of a room's status have one home.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from tether.core.errors import CheckFailedError, TetherError, UsageError
from tether.room.brief import Brief
from tether.room.room import (
    STATUS_B01,
    STATUS_CHECK_FAILED,
    STATUS_OK,
    STATUS_READ_DIRECTLY,
    RoomResult,
    open_room,
    refuse_busy,
    refuse_nesting,
)
from tether.wiki.layout import Wiki


def open_for(
    wiki: Wiki,
    home: Path,
    brief: Brief,
    env: Mapping[str, str],
    *,
    profile: str | None,
    timeout: float | None = None,
) -> RoomResult:
    """Open exactly one room for ``brief`` (refused inside a room) and wait for it."""
    refuse_nesting(env)
    return open_room(wiki, home, brief, profile=profile, env=env, timeout=timeout)


def refuse_early(wiki: Wiki, home: Path, env: Mapping[str, str]) -> None:
    """What ``open_for`` would refuse because of rooms already open, refused before the
    brief is computed (a cold brief takes seconds on a large wiki)."""
    refuse_busy(home, wiki.root, env)


def result_error(result: RoomResult) -> TetherError | None:
    """The error a room's status means, None for a conclusion to use (ok, b01, read directly)."""
    if result.status in (STATUS_OK, STATUS_B01, STATUS_READ_DIRECTLY):
        return None
    if result.status == STATUS_CHECK_FAILED:
        return CheckFailedError(f"the room's conclusion failed the check (room {result.room_id})")
    return UsageError(
        f"the room ended without a conclusion (run {result.run.get('run_id')}, "
        f"{result.run.get('stop')}); see {result.folder}"
    )
