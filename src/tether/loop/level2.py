"""Level 2: only when level 1 found nothing — ask the four sources, with a guard.

(docs/reference/loop.md#level-2-the-four-sources)

First every source is *located* (cheap: a folder exists, an executable is on
PATH, a fingerprint command lists working memory); that gives the fingerprint.
If the guard holds (the last result was exhausted or blind, within the
interval, same fingerprint), nothing is read: the items for the person that
the last reading gave come from the guard, and the tick decides its line.
Otherwise each located source is *read*, in chain order, until one has
something new:

- ``found``: something new that is work. A decision naming a USER ticket moves
  that ticket to ACTIONABLE with the decision as a note; a decision naming any
  other ticket that is not DONE (BLOCKED, WAITING, PARKED), and any other new
  item, becomes an INBOX note, so level 1 triages it next tick and an agent
  gets it — the named ticket itself only moves by its own rule.
- ``empty``: read, nothing new. For ``user.model`` a pattern below the
  confidence threshold is empty and becomes an item for the person.
- ``unavailable``: not located, or the read failed. Never counted as empty.

``exhausted`` only when all four were answerable and empty; else ``blind``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import msgspec

from tether.board import BoardView, State, Ticket
from tether.config.loop import DEFAULT_CONFIDENCE, ROLES, effective_source
from tether.fs import atomic_write_text
from tether.loop import guard, tick_memory
from tether.loop.board_queue import user_lock
from tether.loop.sources import Item, Location, Reading, Source

if TYPE_CHECKING:
    from tether.loop.context import Loop

Status = Literal["found", "empty", "unavailable", "not asked"]


@dataclass
class SourceReport:
    role: str
    kind: str
    where: str
    located: bool
    status: Status
    reason: str | None = None
    read: list[str] = field(default_factory=list)
    items: int = 0
    new: list[Item] = field(default_factory=list)
    found: list[Item] = field(default_factory=list)
    user_items: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "role": self.role,
            "kind": self.kind,
            "where": self.where,
            "located": self.located,
            "status": self.status,
            "reason": self.reason,
            "read": self.read,
            "items": self.items,
            "new": [i.as_dict() for i in self.new],
            "found": [i.as_dict() for i in self.found],
            "user_items": self.user_items,
        }

    def line(self) -> str:
        if self.status == "unavailable":
            return f"{self.role}: unavailable ({self.reason})"
        if self.status == "not asked":
            return f"{self.role}: not asked (an earlier source found work)"
        if not self.read and self.reason:  # a built-in place not made yet: nothing recorded
            return f"{self.role}: {self.status} ({self.reason})"
        what = f"read {len(self.read)} {'file' if len(self.read) == 1 else 'files'}"
        if self.kind == "command" and self.read:
            what = ", ".join(self.read)
        return f"{self.role}: {self.status} ({what}; {self.items} items, {len(self.new)} new)"


Outcome = Literal["found", "exhausted", "blind", "guard"]


@dataclass
class Level2:
    outcome: Outcome
    reports: list[SourceReport]
    unavailable: list[str]
    guard_before: guard.GuardState | None
    guard_why: str
    guard_after: guard.GuardState | None = None
    applied: list[str] = field(default_factory=list)
    user_items: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome,
            "unavailable": self.unavailable,
            "guard": {
                "before": self.guard_before.as_dict() if self.guard_before else None,
                "holds": self.outcome == "guard",
                "why": self.guard_why,
                "after": self.guard_after.as_dict() if self.guard_after else None,
            },
            "sources": [r.as_dict() for r in self.reports],
            "applied": self.applied,
            "user_items": self.user_items,
        }


def run_chain(loop: Loop, view: BoardView, *, dry_run: bool) -> Level2:
    now = loop.clock.now()
    before = guard.load(loop.conn, loop.scope)
    config = config_digest(loop)
    # every source is located anew, a failing one too: a fixed source shows at once
    locations = [(source, source.locate()) for source in loop.sources]
    unavailable = [s.role for s, where in locations if not where.located or where.failure]
    fp = _fingerprint(loop, view, locations, unavailable, config)
    held = guard.holding(before, fp, now, loop.guard_interval)
    if held is not None:
        skipped = [_unread(s, where) for s, where in locations]
        result = Level2("guard", skipped, sorted_roles(held.unavailable), before, "holds")
        result.user_items = list(held.person_items)
        return result
    why = guard.why_not(before, fp, now, loop.guard_interval)
    reports: list[SourceReport] = []
    found = False
    for source, where in locations:
        if found:
            reports.append(_unread(source, where, asked=False))
            continue
        report = _ask(loop, view, source, where)
        reports.append(report)
        found = report.status == "found"
    unavailable = [r.role for r in reports if r.status == "unavailable"]
    failed = [r.role for r in reports if r.status == "unavailable" and r.located]
    outcome: guard.GuardResult = "found" if found else ("blind" if unavailable else "exhausted")
    result = Level2(outcome, reports, unavailable, before, why)
    result.user_items = [u for r in reports for u in r.user_items]
    if not dry_run:
        result.applied = _apply(loop, view, reports)
    # Saved as located before reading, so the next tick compares like with like; only
    # the count of unseen working-memory entries is taken again, after marking them seen.
    # A read that failed counts as unavailable: the next tick carries it (see guard).
    fp = _fingerprint(loop, view, locations, unavailable, config)
    taken = guard.GuardState.taken(outcome, now, fp, person_items=result.user_items, failed=failed)
    result.guard_after = guard.save(loop.conn, loop.scope, taken)
    return result


def config_digest(loop: Loop) -> str:
    """The sources' configuration (kind, paths, commands), as the guard compares it."""
    specs = {role: msgspec.to_builtins(effective_source(loop.settings, role)) for role in ROLES}
    text = json.dumps(specs, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


ROLE_ORDER = ("decisions.ledger", "memory.organic", "memory.curated", "user.model")


def sorted_roles(roles: tuple[str, ...] | list[str]) -> list[str]:
    """Roles in chain order (the order the signal line names them)."""
    return sorted(roles, key=lambda r: ROLE_ORDER.index(r) if r in ROLE_ORDER else 99)


def _fingerprint(
    loop: Loop,
    view: BoardView,
    locations: list[tuple[Source, Location]],
    unavailable: list[str],
    config: str,
) -> guard.Fingerprint:
    parts: dict[str, str] = {}
    for source, where in locations:
        if source.role in unavailable:  # not answerable: in the availability part only
            continue
        parts[source.role] = where.situation
        if where.fingerprint_keys is not None:
            seen = tick_memory.seen_items(loop.conn, loop.scope, source.role)
            new = sum(1 for key in where.fingerprint_keys if key not in seen)
            parts[source.role] = f"new entries: {new}"
    situation = guard.situation(
        [t.id for t in view.in_state(State.ACTIONABLE)],
        [t.id for t in view.in_state(State.USER)],
        parts,
        config,
    )
    return guard.Fingerprint(situation, tuple(sorted(unavailable)))


def _unread(source: Source, where: Location, *, asked: bool = True) -> SourceReport:
    if not where.located:
        return SourceReport(
            source.role, source.kind, where.where, False, "unavailable", where.reason
        )
    if where.failure:
        return SourceReport(
            source.role, source.kind, where.where, True, "unavailable", where.failure
        )
    reason = "guard holds: not read" if asked else None
    return SourceReport(source.role, source.kind, where.where, True, "not asked", reason)


def _ask(loop: Loop, view: BoardView, source: Source, where: Location) -> SourceReport:
    if not where.located:
        return SourceReport(
            source.role, source.kind, where.where, False, "unavailable", where.reason
        )
    if where.failure:
        return SourceReport(
            source.role,
            source.kind,
            where.where,
            True,
            "unavailable",
            f"located, but the read failed: {where.failure}",
        )
    reading = source.read(where)
    report = SourceReport(
        source.role,
        source.kind,
        where.where,
        True,
        "empty",
        reading.note,
        read=reading.read,
        items=len(reading.items),
    )
    if not reading.ok:
        report.status = "unavailable"
        report.reason = f"located, but the read failed: {reading.error}"
        return report
    seen = tick_memory.seen_items(loop.conn, loop.scope, source.role)
    report.new = [i for i in reading.items if i.key not in seen]
    report.user_items = list(reading.user_items)
    report.found = _work(loop, view, source.role, reading, report)
    report.status = "found" if report.found else "empty"
    return report


def _work(
    loop: Loop, view: BoardView, role: str, reading: Reading, report: SourceReport
) -> list[Item]:
    """Which new items are work, by role."""
    new = [i for i in report.new if i.key not in reading.inert]
    if role == "user.model":
        spec = effective_source(loop.settings, role)
        threshold = spec.confidence_threshold
        threshold = DEFAULT_CONFIDENCE if threshold is None else threshold
        low = [i for i in reading.items if i.confidence is None or i.confidence < threshold]
        report.user_items += [
            f"user model, confidence {_pct(i.confidence)} (below {_pct(threshold)}): {i.text}"
            for i in low
        ]
        return [i for i in new if i.confidence is not None and i.confidence >= threshold]
    if role == "decisions.ledger":  # a decision is work when it names an open ticket
        return [i for i in new if _open_tickets(view, i)]
    return list(new)


def _pct(value: float | None) -> str:
    return "unknown" if value is None else f"{value:.0%}"


def _is_user(view: BoardView, ticket_id: str) -> bool:
    ticket = view.get(ticket_id)
    return ticket is not None and ticket.state is State.USER


def _open_tickets(view: BoardView, item: Item) -> list[Ticket]:
    """The tickets a decision names that are on the board, not DONE and not user-locked."""
    named = [view.get(t) for t in item.tickets]
    return [
        t for t in named if t is not None and t.state is not State.DONE and user_lock(t) is None
    ]


def _apply(loop: Loop, view: BoardView, reports: list[SourceReport]) -> list[str]:
    """Turn found items into board entries; remember what each source has reported."""
    applied: list[str] = []
    now = loop.clock.now()
    inbox = loop.board.folder(State.INBOX)
    for report in reports:
        for item in report.found:
            users = [t for t in item.tickets if _is_user(view, t)]
            for ticket_id in users:
                loop.board.move(ticket_id, State.ACTIONABLE, note=f"{report.role}: {item.text}")
                applied.append(f"{ticket_id} USER → ACTIONABLE ({report.role})")
            others = [t for t in _open_tickets(view, item) if t.id not in users]
            if users and not others:
                continue
            text = item.text
            if others:  # the decision goes to an agent; the tickets keep their places
                named = ", ".join(f'{t.id} ({t.location} "{t.title}")' for t in others)
                text = f"Decision on {named}: {item.text}"
            name = f"{report.role}-{hashlib.sha256(item.key.encode()).hexdigest()[:10]}.md"
            atomic_write_text(
                inbox / name,
                f"{text}\n\nFound by {report.role} in "
                f"{report.where} ({item.origin}).\n\n{loop.session_line()}\n",
            )
            applied.append(f"INBOX/{name} ({report.role})")
        if report.status in ("found", "empty"):
            keep_unseen = {
                u for u in report.new if report.role == "user.model" and u not in report.found
            }
            tick_memory.mark_seen(
                loop.conn,
                loop.scope,
                report.role,
                [i.key for i in report.new if i not in keep_unseen],
                now,
            )
    return applied
