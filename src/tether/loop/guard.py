"""The guard against re-running the level-2 chain when nothing changed
(docs/explanation/exhausted-vs-blind.md#the-guard).

The last chain result (``exhausted``, ``blind`` or ``found``), its time and a
fingerprint are kept in the store. The fingerprint has two parts: the
situation (open ACTIONABLE and USER ticket ids, the file sources' files and
modification times, the count of working-memory entries not seen yet — or the
output of another ``fingerprint_command``) and the availability (the sorted
roles that could not be located). Within the guard interval and with the same
fingerprint, the chain is not run again.

The guard also keeps the items for the person that reading the sources gave
(undecided decisions, low-confidence patterns), stored beside the situation
(key ``person_items``) and outside the fingerprint: a guarded tick still puts
them in the person's bundle, so a user-only stop stays user-only while the
guard holds, and ``exhausted unchanged`` is said only when nothing waits for
the person.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from tether.clock import from_iso, to_iso
from tether.store.state_db import transaction

GuardResult = Literal["exhausted", "blind", "found"]
STOPPING: tuple[GuardResult, ...] = ("exhausted", "blind")


@dataclass(frozen=True)
class Fingerprint:
    situation: Mapping[str, Any]
    unavailable: tuple[str, ...]

    @property
    def digest(self) -> str:
        text = json.dumps(
            {"situation": self.situation, "unavailable": sorted(self.unavailable)},
            sort_keys=True,
            ensure_ascii=False,
            separators=(",", ":"),
        )
        import hashlib  # here: a reader of the guard's state (tether status) never digests

        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


@dataclass(frozen=True)
class GuardState:
    result: GuardResult
    at: datetime
    fingerprint: str
    unavailable: tuple[str, ...] = ()
    situation: Mapping[str, Any] = field(default_factory=dict)
    person_items: tuple[str, ...] = ()  # what the reading left for the person
    failed: tuple[str, ...] = ()  # roles located but not answered (a read that failed)

    @classmethod
    def taken(
        cls,
        result: GuardResult,
        at: datetime,
        fp: Fingerprint,
        *,
        person_items: Sequence[str] = (),
        failed: Sequence[str] = (),
    ) -> GuardState:
        """The guard a chain's ``result`` leaves, with the fingerprint taken for it."""
        return cls(
            result,
            at,
            fp.digest,
            tuple(sorted(fp.unavailable)),
            fp.situation,
            tuple(person_items),
            tuple(sorted(failed)),
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "result": self.result,
            "at": to_iso(self.at),
            "fingerprint": self.fingerprint,
            "unavailable": list(self.unavailable),
            "person_items": list(self.person_items),
            "failed": list(self.failed),
        }


def load(conn: sqlite3.Connection, scope: str) -> GuardState | None:
    row = conn.execute(
        "SELECT result, at, fingerprint, situation, unavailable FROM loop_guard WHERE scope = ?",
        (scope,),
    ).fetchone()
    if row is None:
        return None
    result, at, fingerprint, situation, unavailable = row
    stored = json.loads(situation)
    items = stored.pop(PERSON_ITEMS, [])
    failed = stored.pop(FAILED, [])
    return GuardState(
        result=result,
        at=from_iso(at),
        fingerprint=fingerprint,
        unavailable=tuple(json.loads(unavailable)),
        situation=stored,
        person_items=tuple(str(i) for i in items) if isinstance(items, list) else (),
        failed=tuple(str(r) for r in failed) if isinstance(failed, list) else (),
    )


PERSON_ITEMS = "person_items"
FAILED = "failed_roles"


def save(conn: sqlite3.Connection, scope: str, state: GuardState) -> GuardState:
    """Keep ``state`` as the guard of ``scope`` (one per scope) and return it."""
    stored = {**state.situation, PERSON_ITEMS: list(state.person_items), FAILED: list(state.failed)}
    with transaction(conn):
        conn.execute(
            "INSERT INTO loop_guard (scope, result, at, fingerprint, situation, unavailable) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (scope) DO UPDATE SET result = excluded.result,"
            " at = excluded.at, fingerprint = excluded.fingerprint,"
            " situation = excluded.situation, unavailable = excluded.unavailable",
            (
                scope,
                state.result,
                to_iso(state.at),
                state.fingerprint,
                json.dumps(stored, sort_keys=True, ensure_ascii=False),
                json.dumps(list(state.unavailable)),
            ),
        )
    return state


def holding(
    state: GuardState | None, fp: Fingerprint, now: datetime, interval_seconds: float
) -> GuardState | None:
    """The stored state when it still holds (a stop result, recent, same fingerprint)."""
    if state is None or state.result not in STOPPING:
        return None
    age = (now - state.at).total_seconds()
    if age < 0 or age >= interval_seconds:
        return None
    if state.fingerprint != fp.digest:
        return None
    return state


def why_not(
    state: GuardState | None, fp: Fingerprint, now: datetime, interval_seconds: float
) -> str:
    """In words, why the guard does not hold (for the tick's evidence)."""
    if state is None:
        return "no earlier chain result"
    if state.result not in STOPPING:
        return f"the last chain result was {state.result}"
    age = (now - state.at).total_seconds()
    if age >= interval_seconds or age < 0:
        return f"the last result is {age:.0f}s old (interval {interval_seconds:.0f}s)"
    if tuple(sorted(fp.unavailable)) != tuple(state.unavailable):
        return (
            f"availability changed: unavailable was {list(state.unavailable)}, "
            f"now {sorted(fp.unavailable)}"
        )
    if state.fingerprint != fp.digest:
        return "the situation changed"
    return "holds"


def situation(
    actionable: Sequence[str],
    user: Sequence[str],
    sources: Mapping[str, str],
    config: str = "",
) -> dict[str, Any]:
    return {
        "actionable": sorted(actionable),
        "user": sorted(user),
        "sources": dict(sources),
        "config": config,
    }
