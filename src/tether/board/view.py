"""BoardView: one consistent reading of the board, with per-state indexes."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from tether.board.states import State
from tether.board.ticket import Ticket

_PRIORITY_RANK = {"P1": 0, "P2": 1, "P3": 2}


def priority_order(ticket: Ticket) -> tuple[int, float, str]:
    """P1 first, then the oldest ``created``, then the id (a stable tie-break)."""
    return (_PRIORITY_RANK[ticket.priority], ticket.created.timestamp(), ticket.id)


@dataclass(frozen=True)
class BoardView:
    tickets: tuple[Ticket, ...]
    informal: tuple[Path, ...] = ()
    malformed: tuple[tuple[Path, str], ...] = ()
    _by_folder: dict[tuple[State, str | None], list[Ticket]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    _by_id: dict[str, Ticket] = field(default_factory=dict, init=False, repr=False, compare=False)
    _actionable: list[Ticket] = field(default_factory=list, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        by_folder = self._by_folder
        for ticket in self.tickets:
            by_folder.setdefault((ticket.state, ticket.reason), []).append(ticket)
            self._by_id[ticket.id] = ticket
        self._actionable.extend(
            sorted(by_folder.get((State.ACTIONABLE, None), []), key=priority_order)
        )

    def in_state(self, state: State, reason: str | None = None) -> list[Ticket]:
        """The tickets in a state (all its reasons unless ``reason`` is given), board order."""
        if reason is not None or state not in _WITH_REASONS:
            return list(self._by_folder.get((state, reason), ()))
        return [t for (s, _), group in self._by_folder.items() if s is state for t in group]

    def actionable_by_priority(self) -> list[Ticket]:
        """ACTIONABLE tickets, P1 first, then the oldest ``created``."""
        return list(self._actionable)

    def untriaged(self) -> list[Path]:
        """Everything in INBOX: informal files and INBOX tickets (by path)."""
        inbox = [t.path for t in self._by_folder.get((State.INBOX, None), ())]
        return sorted([*self.informal, *inbox])

    def get(self, ticket_id: str) -> Ticket | None:
        return self._by_id.get(ticket_id)

    def counts(self) -> dict[str, int]:
        """Tickets per folder label (``BLOCKED/lock``), plus informal and malformed."""
        result = {
            (f"{s.value}/{r}" if r else s.value): len(group)
            for (s, r), group in sorted(self._by_folder.items(), key=lambda kv: _folder_rank(kv[0]))
        }
        result["informal"] = len(self.informal)
        result["malformed"] = len(self.malformed)
        return result


_WITH_REASONS = {State.BLOCKED, State.WAITING, State.USER, State.PARKED}
_STATE_RANK = {s: i for i, s in enumerate(State)}


def _folder_rank(key: tuple[State, str | None]) -> tuple[int, str]:
    return (_STATE_RANK[key[0]], key[1] or "")
