"""The board panel of ``tether status``: counts, what the loop takes next, what waits on what.

Read from the ticket folders themselves (no tick, no check run, nothing
written), in the loop's own order (``tether.loop.board_queue``), so that a
ticket a person just moved to USER shows up here before any loop runs.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from tether.config import Config

READY_SHOWN = 10  # the next units; the count covers all of them
BLOCKED_SHOWN = 10


def board_panel(config: Config, moment: float) -> dict[str, Any] | None:
    """The project's board at ``moment``; None when the project has no board folder."""
    from tether.config.loop import LoopSettings
    from tether.loop.project_board import board_of, board_root

    if not board_root(config).is_dir():
        return None  # before the board package is even loaded
    folder = config.section("loop", LoopSettings).board
    from tether.board import BoardError, State
    from tether.loop.board_queue import board_queue

    board = board_of(config)
    try:
        view = board.load()
    except (BoardError, OSError) as exc:
        return {"root": str(board.root), "folder": folder, "error": str(exc)}
    today = datetime.fromtimestamp(moment, UTC).date()
    queue = board_queue(view, config.project_root, today)
    counts = {state.value: len(view.in_state(state)) for state in State}
    counts["informal"] = len(view.informal)
    counts["malformed"] = len(view.malformed)
    return {
        "root": str(board.root),
        "folder": folder,
        "counts": counts,
        "ready_count": len(queue.ready),
        "ready": [e.as_dict() for e in queue.ready[:READY_SHOWN]],
        "blocked_count": len(queue.blocked),
        "blocked": [e.as_dict() for e in queue.blocked[:BLOCKED_SHOWN]],
        "for_person": [e.as_dict() for e in queue.for_person],
    }
