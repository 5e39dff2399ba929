"""The project's board, and a listing of it as one JSON-ready object.

``board_of`` is the board the project's loop works on (``tether status`` and the
dashboard read it through here without importing the rest of the loop).

``tether board`` and the ``board_*`` MCP tools open the board and list it
through here, so the default folder and the state filter have one home.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tether.config import Config, load_config
from tether.config.loop import LoopSettings

if TYPE_CHECKING:
    from tether.board import Board, BoardView, State, Ticket
    from tether.clock import Clock


def project_board(path: Path | None = None) -> Board:
    """The board at ``path``, else ``[loop] board``, else ``<project root>/tickets``.

    Every note written through it ends with the session stamp (``tether-board``)."""
    from tether.board import Board
    from tether.core.session_stamp import stamp

    config = load_config()
    if path is None:
        loop = config.sections.get("loop")
        configured = getattr(loop, "board", None) if loop is not None else None
        path = config.project_root / (configured or "tickets")
    board = Board(Path(path).absolute(), config.project_root, home=config.home)
    board.stamp = lambda: stamp(os.environ, "tether-board")
    return board


def board_root(config: Config) -> Path:
    """The folder of the board the project's loop works on (``[loop] board``, relative to
    the project); known without loading the board package."""
    settings = config.section("loop", LoopSettings)
    folder = Path(settings.board).expanduser()
    return folder if folder.is_absolute() else config.project_root / folder


def board_of(config: Config, *, clock: Clock | None = None) -> Board:
    """The board the project's loop works on (see ``board_root``)."""
    from tether.board import Board

    return Board(board_root(config), config.project_root, clock=clock, home=config.home)


def state_filter(text: str) -> tuple[State, str | None]:
    """STATE or STATE/reason; STATE alone means every reason of a state with reasons."""
    from tether.board import REASONS, State, parse_state

    if "/" not in text.strip("/"):
        try:
            state = State(text.strip("/").upper())
        except ValueError:
            return parse_state(text)
        if state in REASONS:
            return state, None
    return parse_state(text)


def listed(board: Board, state_text: str | None = None) -> tuple[BoardView, list[Ticket]]:
    """The board's view and its tickets, only those in ``state_text`` when given."""
    view = board.load()
    if state_text:
        state, reason = state_filter(state_text)
        return view, view.in_state(state, reason)
    return view, list(view.tickets)


def listing(board: Board, view: BoardView, tickets: list[Ticket]) -> dict[str, Any]:
    """What ``board list --json`` prints."""
    return {
        "board": str(board.root),
        "counts": view.counts(),
        "tickets": [t.to_json(body=False) for t in tickets],
        "informal": [str(p) for p in view.informal],
        "malformed": [{"path": str(p), "error": m} for p, m in view.malformed],
    }
