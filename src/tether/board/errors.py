"""Board errors: each carries the path it is about and says what to fix."""

from __future__ import annotations

from pathlib import Path

from tether.core.errors import TetherError
from tether.core.exit_codes import ExitCode


class BoardError(TetherError):
    """Something on the board (a ticket, a folder, an argument) is not acceptable."""

    exit_code = ExitCode.USAGE

    def __init__(self, message: str, *, path: Path | None = None) -> None:
        super().__init__(f"{path}: {message}" if path is not None else message)
        self.path = path
        self.reason = message


class TicketNotFoundError(BoardError):
    """No ticket with this id on the board."""

    def __init__(self, ticket_id: str, root: Path) -> None:
        super().__init__(
            f"no ticket {ticket_id!r} on the board in {root}; `tether board list` shows the ids."
        )
        self.ticket_id = ticket_id


class TicketFormatError(BoardError):
    """A ticket file that cannot be read as a ticket; it is left untouched."""
