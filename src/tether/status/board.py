"""The board panel of ``tether status``: counts, what the loop takes next, what waits on what.

Read from the ticket folders themselves (no tick, no check run, nothing
written), in the loop's own order (``tether.loop.board_queue``), so that a
ticket a person just moved to USER shows up here before any loop runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from tether.config import Config

if TYPE_CHECKING:
    from tether.loop.board_queue import Entry

READY_SHOWN = 10  # the next units; the count covers all of them
BLOCKED_SHOWN = 10


@dataclass(frozen=True)
class BoardPanel:
    """The board's counts and queue, or why it could not be read (``error``)."""

    root: str
    folder: str
    error: str | None = None
    counts: dict[str, int] = field(default_factory=dict)  # per state, informal, malformed
    ready_count: int = 0
    ready: list[Entry] = field(default_factory=list)  # the first READY_SHOWN
    blocked_count: int = 0
    blocked: list[Entry] = field(default_factory=list)  # the first BLOCKED_SHOWN
    for_person: list[Entry] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        if self.error is not None:
            return {"root": self.root, "folder": self.folder, "error": self.error}
        return {
            "root": self.root,
            "folder": self.folder,
            "counts": self.counts,
            "ready_count": self.ready_count,
            "ready": [e.as_dict() for e in self.ready],
            "blocked_count": self.blocked_count,
            "blocked": [e.as_dict() for e in self.blocked],
            "for_person": [e.as_dict() for e in self.for_person],
        }


def board_panel(config: Config, moment: float) -> BoardPanel | None:
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
        return BoardPanel(str(board.root), folder, error=str(exc))
    today = datetime.fromtimestamp(moment, UTC).date()
    queue = board_queue(view, config.project_root, today)
    counts = {state.value: len(view.in_state(state)) for state in State}
    counts["informal"] = len(view.informal)
    counts["malformed"] = len(view.malformed)
    return BoardPanel(
        str(board.root),
        folder,
        counts=counts,
        ready_count=len(queue.ready),
        ready=queue.ready[:READY_SHOWN],
        blocked_count=len(queue.blocked),
        blocked=queue.blocked[:BLOCKED_SHOWN],
        for_person=list(queue.for_person),
    )
