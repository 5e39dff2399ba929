"""One tick: level 1, else level 2 behind the guard; exactly one signal line at the end.

    from tether.loop import open_loop, tick
    loop = open_loop(project_dir)
    result = tick(loop)            # or tick(loop, dry_run=True)
    print(result.line); exit(result.exit_code)

A dry run decides and says what it would dispatch; it runs no agent and moves
no ticket, but it still asks the sources, updates the guard and gives the
signal line (CONTINUE when it found work).

Whenever level 2 ends without new work — read again or held by the guard —
the person's bundle is gathered: the items level 1 saw (USER tickets, held
TODO items, locked tickets, board files tether cannot read) and those the
sources' reading left (kept by the guard). Then ``blind`` stays blind (its
bundle shown), and an otherwise ``exhausted`` chain stops ``user-only`` while
the bundle is not empty: ``exhausted`` — proven or guarded — is said only when
nothing waits for the person.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from tether.clock import to_iso
from tether.core.exit_codes import ExitCode
from tether.loop.dispatch import DEMONSTRATION_WARNING, Dispatched, dispatch
from tether.loop.level1 import Level1, scan
from tether.loop.signal import Signal, render
from tether.loop.tick_memory import record_tick

if TYPE_CHECKING:
    from tether.loop.context import Loop
    from tether.loop.level2 import Level2
    from tether.loop.user_bundle import Bundle


@dataclass
class TickResult:
    signal: Signal
    line: str
    at: datetime
    dry_run: bool
    level1: Level1
    dispatched: Dispatched | None = None
    level2: Level2 | None = None
    bundle: Bundle | None = None
    # runs whose supervisor had died, found and recorded on their tickets first
    recovered: list[str] = field(default_factory=list)
    tick_id: str | None = None  # the session its notes name when the loop runs in none

    @property
    def warnings(self) -> list[str]:
        """Level 1's warnings, and the one of a run that only demonstrated."""
        demo = self.dispatched is not None and self.dispatched.demonstration
        return [*self.level1.warnings, *([DEMONSTRATION_WARNING] if demo else [])]

    @property
    def exit_code(self) -> ExitCode:
        return self.signal.exit_code

    def progress(self) -> str:
        """One short line for ``tether loop run``."""
        work = self.level1.work
        if self.dispatched is not None:
            if work is not None and work.source in ("blocked", "waiting"):
                return f"{work.summary} → ACTIONABLE; {self.dispatched.summary}"
            return self.dispatched.summary
        if self.level2 is None:
            return "nothing to do"
        if self.level2.outcome == "guard":
            return "level 1 found nothing; the guard holds, sources not read again"
        if self.level2.outcome == "found":
            return "level 2 found new work: " + "; ".join(self.level2.applied or ["(dry run)"])
        states = ", ".join(f"{r.role} {r.status}" for r in self.level2.reports)
        return f"level 1 found nothing; level 2: {states}"

    def run_lines(self) -> list[str]:
        """What ``tether loop run`` prints after a tick's progress line: the signal line last."""
        out = [f"warning: {w}" for w in self.warnings]
        if self.bundle is not None:
            out += self.bundle.lines()
        return [*out, self.line]

    def lines(self) -> list[str]:
        """The human output of the tick; the last line is the signal line."""
        out: list[str] = [f"warning: {w}" for w in self.warnings]
        out += [f"recovered: run {r} was abandoned (its supervisor died)" for r in self.recovered]
        work = self.level1.work
        if work is not None:
            out.append(f"level 1: {work.summary}")
        else:
            out.append("level 1: nothing autonomous found (" + _looked_at(self.level1) + ")")
        if self.dispatched is not None:
            out.append(("dry run: " if self.dry_run else "") + self.dispatched.summary)
        if self.level2 is not None:
            if self.level2.outcome == "guard":
                before = self.level2.guard_before
                assert before is not None
                out.append(
                    f"level 2: guard holds ({before.result} at {to_iso(before.at)}, same "
                    f"fingerprint, within the interval): sources not read again"
                )
            else:
                out.append(f"level 2: guard does not hold ({self.level2.guard_why})")
                out += [f"level 2: {r.line()}" for r in self.level2.reports]
                out += [f"level 2: found → {a}" for a in self.level2.applied]
        if self.bundle is not None:
            out += self.bundle.lines()
        out.append(self.line)
        return out

    def as_dict(self) -> dict[str, Any]:
        return {
            "signal": self.signal.value,
            "line": self.line,
            "exit_code": int(self.exit_code),
            "at": to_iso(self.at),
            "dry_run": self.dry_run,
            "warnings": self.warnings,
            "level1": {
                "work": self.level1.work.as_dict() if self.level1.work else None,
                "sources": self.level1.evidence,
                "warnings": self.level1.warnings,
            },
            "dispatched": self.dispatched.as_dict() if self.dispatched else None,
            "level2": self.level2.as_dict() if self.level2 else None,
            "bundle": self.bundle.as_dict() if self.bundle else None,
            "recovered": self.recovered,
            "tick_id": self.tick_id,
        }


def _looked_at(level1: Level1) -> str:
    parts: list[str] = []
    for entry in level1.evidence:
        source = entry["source"]
        if source == "actionable":
            parts.append(f"{len(entry['open'])} ACTIONABLE")
        elif source == "blocked":
            ran = sum(1 for c in entry["checks"] if "ticket" in c)
            skipped = sum(c.get("skipped", 0) for c in entry["checks"])
            parts.append(
                f"{ran} BLOCKED checked" + (f", {skipped} checked recently" if skipped else "")
            )
        elif source == "waiting":
            parts.append(f"{entry['waiting']} WAITING not due")
        elif source == "todo":
            parts.append(f"{entry['open'] - entry['held'] - entry['given_up']} open TODO items")
        elif source == "routine":
            parts.append("no routine due")
        elif source == "follow-up":
            parts.append("no run to follow up")
    return ", ".join(["INBOX triaged", *parts])


def tick(loop: Loop, *, dry_run: bool = False) -> TickResult:
    """One tick; a real one holds the board's loop lock (``LoopError`` if another holds it).

    Every tick, dry or not, is kept in the board's history (``records.recent_ticks``).
    """
    tick_id = loop.begin_tick()
    if dry_run:
        result = _tick(loop, dry_run=True)
    else:
        with loop.exclusive():
            result = _tick(loop, dry_run=False)
    result.tick_id = tick_id
    record_tick(loop.conn, loop.scope, result.as_dict())
    return result


def _tick(loop: Loop, *, dry_run: bool) -> TickResult:
    recovered = [] if dry_run else _adopt_abandoned(loop)
    result = _decide(loop, dry_run=dry_run)
    result.recovered = recovered
    return result


def _adopt_abandoned(loop: Loop) -> list[str]:
    # imported here: a dry run (the Stop hook's, at every end of a turn) adopts
    # nothing and need not load the recovery of runs
    from tether.loop.recovered import adopt_abandoned

    return adopt_abandoned(loop)


def _decide(loop: Loop, *, dry_run: bool) -> TickResult:
    now = loop.clock.now()
    view = loop.board.load()
    level1 = scan(loop, view, dry_run=dry_run)
    if level1.work is not None:
        dispatched = dispatch(loop, level1.work, view, dry_run=dry_run)
        return TickResult(
            Signal.CONTINUE, render(Signal.CONTINUE), now, dry_run, level1, dispatched=dispatched
        )
    # imported here: level 2 and the person's bundle are asked only when level 1 found
    # nothing; a tick over a board with work (the Stop hook's, at every turn) loads neither
    from tether.loop.level2 import run_chain
    from tether.loop.user_bundle import collect

    level2 = run_chain(loop, view, dry_run=dry_run)
    result = TickResult(Signal.CONTINUE, "", now, dry_run, level1, level2=level2)
    if level2.outcome == "found":
        result.line = render(Signal.CONTINUE)
        return result
    bundle = collect(view, [*level1.person_items(), *level2.user_items])
    if level2.outcome == "guard":
        before = level2.guard_before
        assert before is not None
        if before.result == "blind":
            signal = Signal.GUARD_BLIND
        else:
            signal = Signal.GUARD_EXHAUSTED if bundle.empty else Signal.USER_ONLY
        result.signal, result.line = signal, render(signal, since=before.at)
        result.bundle = None if bundle.empty else bundle
        return result
    result.bundle = bundle
    if level2.outcome == "blind":
        result.signal = Signal.BLIND
        result.line = render(Signal.BLIND, unavailable=level2.unavailable)
    elif result.bundle.empty:
        result.signal, result.line = Signal.EXHAUSTED, render(Signal.EXHAUSTED)
    else:
        result.signal, result.line = Signal.USER_ONLY, render(Signal.USER_ONLY)
    return result
