"""The two steps an ingesting agent takes: claim the next entry, end the claimed one.

``tether ingest next|end`` and the ``ingest_next`` / ``ingest_end`` MCP tools
both call these, so the one-unit-per-session rule and the fixed end lines have
one home.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from tether.config.schema import WikiSettings
from tether.core.project import resolve_home
from tether.core.session_identity import resolve
from tether.gate import gate_db
from tether.ingest.instructions import EntrySummary, entry_summary, ingest_instructions
from tether.ingest.lines import BUNDLES, ENTRIES, end_lines, templates
from tether.ingest.manifest import BUNDLE
from tether.ingest.queue import Queue
from tether.wiki.layout import Wiki


def session_owner() -> str:
    """Who claims: the session the gate counts this process under.

    A context that was given a new session id (``tether session new``,
    ``tether ingest continue-here``) claims under that new id: those are the
    only legitimate boundaries between two units of one context.
    """
    key = resolve(None, None).key
    try:
        conn = gate_db.connect_reader(resolve_home())
    except (gate_db.GateDatabaseError, OSError):
        return key  # no gate database yet: no context was ever re-pointed
    try:
        row = conn.execute(
            "SELECT session_id FROM contexts WHERE context_key = ?", (key,)
        ).fetchone()
    except gate_db.Error:
        row = None
    finally:
        conn.close()
    return key if row is None else str(row[0])


def headless() -> bool:
    """True inside a ``tether run`` (no person in the loop to answer a question)."""
    return bool(os.environ.get("TETHER_RUN_ID"))


@dataclass(frozen=True)
class Claim:
    entry_id: str
    resumed: bool
    instructions: str
    summary: EntrySummary

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.summary.as_dict(),
            "resumed": self.resumed,
            "instructions": self.instructions,
        }


def claim_next(wiki: Wiki, owner: str | None = None) -> Claim | None:
    """Claim exactly one entry (oldest first) for ``owner``; None when nothing waits."""
    found = Queue(wiki).next(owner or session_owner(), headless=headless())
    if found is None:
        return None
    entry, resumed = found
    return Claim(entry.id, resumed, ingest_instructions(entry, wiki), entry_summary(entry))


def end_claim(
    wiki: Wiki,
    settings: WikiSettings,
    entry_id: str | None = None,
    owner: str | None = None,
    *,
    own_only: bool = False,
) -> list[str]:
    """Mark the claimed entry done; the fixed line per kind of unit that still waits.

    ``own_only``: a named entry must be ``owner``'s own claim (an agent's call; a person
    at the CLI may end any session's claim by name)."""
    # a bad line setting stops here, before the entry is moved
    chosen = templates(settings.language, settings.entries_line, settings.bundles_line)
    queue = Queue(wiki)
    queue.end(owner or session_owner(), entry_id, own_only=own_only)
    waiting = queue.waiting()
    bundles = sum(1 for e in waiting if e.kind == BUNDLE)
    return end_lines({ENTRIES: len(waiting) - bundles, BUNDLES: bundles}, chosen)
