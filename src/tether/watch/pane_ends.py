"""When a pane subagent is starting, running or over, and how it ended.

A pane lives on after its agent: the agent was the pane's own process and tmux
keeps the dead pane (``remain-on-exit``), or the pane's shell runs on. Either
way the subagent seen running is reported ended once its agent is gone, with
how it ended where tmux can say (:class:`~tether.watch.tmux.Pane`). tmux marks
the pane dead, with the status, a moment after the agent is gone: the end is
told once, so it waits for that word a little before saying it without.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace

from tether.watch.proctree import ProcessTable
from tether.watch.subagents import Subagent
from tether.watch.tmux import Pane

# A pane without an agent stays "starting" this long after something last ran in it:
# its shell is between two commands (`cd x && setup; agent`) for a moment.
STARTING_GRACE = 2.0
# how long a pane's agent may be gone before tmux marks the pane dead with its status;
# past it, the pane's shell lives on (or tmux cannot say) and the end is said without one
DEAD_PANE_GRACE = 3.0


class PaneEnds:
    """What the survey remembers of pane subagents between two looks."""

    def __init__(self, dead_pane_grace: float = DEAD_PANE_GRACE) -> None:
        self.dead_pane_grace = dead_pane_grace
        self._ran: set[str] = set()  # subagents seen running: without an agent now, they ended
        # pane subagents seen running: while their pane lives they are reported ended
        self._panes_ran: dict[str, Subagent] = {}
        self._awaiting_dead: dict[str, float] = {}  # pane key -> when its agent was missed
        self._busy: dict[str, float] = {}  # agentless panes: when something last ran in them

    def ended(self, found: Sequence[Subagent], panes: Sequence[Pane]) -> list[Subagent]:
        """Pane subagents seen running whose agent is gone while the pane is there: ended,
        with how (a dead pane tmux keeps knows its status). A closed pane drops out."""
        listed = {s.key for s in found}
        for sub in found:
            if sub.kind == "pane" and sub.running:
                self._panes_ran[sub.key] = sub
                self._awaiting_dead.pop(sub.key, None)  # its next end waits afresh
        by_id = {p.pane_id: p for p in panes}
        out: list[Subagent] = []
        for key, sub in list(self._panes_ran.items()):
            if key in listed:
                continue
            pane = by_id.get(sub.pane.pane_id) if sub.pane is not None else None
            if pane is None:
                del self._panes_ran[key]  # its pane closed: how it ended cannot be known
                self._awaiting_dead.pop(key, None)
                continue
            if self._dead_pane_coming(sub, pane):
                out.append(sub)  # as last seen, until tmux says how it ended
                continue
            out.append(
                replace(
                    sub,
                    running=False,
                    agent=None,
                    pane=pane,
                    log=None,
                    exit_status=pane.dead_status if pane.dead else None,
                    signal=pane.dead_signal if pane.dead else None,
                )
            )
        return out

    def starting_or_ended(self, sub: Subagent, table: ProcessTable) -> Subagent:
        """A pane without an agent yet is ``starting`` while something runs in it."""
        if sub.running:
            self._ran.add(sub.key)
            return sub
        if sub.kind != "pane" or sub.pane is None or sub.pane.end_known:
            return sub
        if sub.key in self._ran:  # it ran: ended, once tmux has had its moment to say how
            last = self._panes_ran.get(sub.key)
            return last if last is not None and self._dead_pane_coming(sub, sub.pane) else sub
        if sub.pane.dead:
            return sub
        moment = time.monotonic()
        if next(table.descendants(sub.pane.pane_pid), None) is not None:
            self._busy[sub.key] = moment
        elif moment - self._busy.get(sub.key, -STARTING_GRACE) >= STARTING_GRACE:
            return sub  # nothing runs in the pane: its shell waits, no agent is coming
        # something runs there (or ran a moment ago: the shell between two commands)
        return replace(sub, starting=True)

    def _dead_pane_coming(self, sub: Subagent, pane: Pane) -> bool:
        """The agent is gone and tmux has not said how yet (the pane is not dead, or dead
        without its status): it may, a moment later (the person is told an end only once)."""
        if pane.end_known:
            return False
        first = self._awaiting_dead.setdefault(sub.key, time.monotonic())
        return time.monotonic() - first < self.dead_pane_grace
