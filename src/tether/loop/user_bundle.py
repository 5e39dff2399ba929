"""The person's bundle: every USER/* ticket and every open question, in one block.

Presented once, before the STOP line, instead of one ping per item: USER
tickets with what each needs, undecided decisions from the ledger, user-model
patterns below the confidence threshold, TODO items that wait for an approval
or a decision, and units that ended unfinished too many times in a row.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tether.board import BoardView, State, Ticket
from tether.loop.board_queue import in_order


@dataclass
class Bundle:
    tickets: list[Ticket] = field(default_factory=list)
    items: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.tickets and not self.items

    @property
    def size(self) -> int:
        return len(self.tickets) + len(self.items)

    def lines(self) -> list[str]:
        if self.empty:
            return []
        noun = "item" if self.size == 1 else "items"
        out = [f"For you, in one bundle ({self.size} {noun}):"]
        for ticket in self.tickets:
            needs = f" — needs: {ticket.needs}" if ticket.needs else ""
            out.append(
                f'  - {ticket.location} {ticket.id} ({ticket.priority}) "{ticket.title}"{needs}'
            )
        out += [f"  - {item}" for item in self.items]
        return out

    def as_dict(self) -> dict[str, Any]:
        return {
            "tickets": [
                {
                    "id": t.id,
                    "title": t.title,
                    "location": t.location,
                    "priority": t.priority,
                    "needs": t.needs,
                    "path": str(t.path),
                }
                for t in self.tickets
            ],
            "items": list(self.items),
        }


def collect(view: BoardView, items: list[str]) -> Bundle:
    tickets = in_order(view, State.USER)
    return Bundle(tickets, list(dict.fromkeys(items)))
