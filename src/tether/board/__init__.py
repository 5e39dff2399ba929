"""The ticket board: Markdown tickets with YAML front matter in state folders
(docs/reference/board.md).

    from tether.board import Board, State
    board = Board(project_root / "tickets")
    view = board.load()
    for ticket in view.actionable_by_priority(): ...

The format is described in docs/reference/board.md.
"""

from __future__ import annotations

from tether.board.board import Board, NewTicket
from tether.board.errors import BoardError, TicketFormatError, TicketNotFoundError
from tether.board.states import PRIORITIES, REASONS, State, is_ticket_id, parse_state
from tether.board.ticket import Ticket
from tether.board.view import BoardView

__all__ = [
    "PRIORITIES",
    "REASONS",
    "Board",
    "BoardError",
    "BoardView",
    "NewTicket",
    "State",
    "Ticket",
    "TicketFormatError",
    "TicketNotFoundError",
    "is_ticket_id",
    "parse_state",
]
