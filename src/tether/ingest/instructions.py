"""What an ingest run is told: the one entry, where its source is, and the hard end."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tether.ingest.entry import Entry
from tether.ingest.manifest import BUNDLE
from tether.wiki.layout import Wiki

RECOMMENDATION = (
    "Recommendation: /clear first, then ingest the next entry in a fresh context. "
    "Reason: provenance — with the last source still in context, facts from it end up on the "
    "next source's pages or are credited to it, and no check can tell; and budget — one "
    "ingest takes some 20–35 tool calls of a session's call budget (60 by default), so the "
    "second or third ingest in one context runs into the gate."
)


@dataclass(frozen=True)
class EntrySummary:
    """The claimed entry as an ingest run is shown it (``tether ingest next --json``)."""

    id: str
    kind: str
    name: str
    folder: str
    # as the manifest holds them: printed as they are, a value of the wrong type included
    origin: object
    size: object
    sha256: object
    released_at: object
    capture: object

    @property
    def source(self) -> str:
        """Where the entry's content is, relative to the wiki root."""
        return f"raw/{self.name}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "name": self.name,
            "source": self.source,
            "origin": self.origin,
            "size": self.size,
            "sha256": self.sha256,
            "released_at": self.released_at,
            "capture": self.capture,
            "folder": self.folder,
        }


def entry_summary(entry: Entry) -> EntrySummary:
    m = entry.manifest.fields
    return EntrySummary(
        id=entry.id,
        kind=entry.kind,
        name=entry.name,
        folder=str(entry.folder),
        origin=m.get("origin"),
        size=m.get("size"),
        sha256=m.get("sha256"),
        released_at=m.get("released_at"),
        capture=m.get("capture"),
    )


def ingest_instructions(entry: Entry, wiki: Wiki, *, unattended: bool = False) -> str:
    source = f"raw/{entry.name}"
    what = "bundle (a captured repository)" if entry.kind == BUNDLE else "source"
    lines = [
        f"Ingest exactly one {what}: {entry.id}",
        f"- its content is in {source} (under {wiki.root}); read it from there",
        "- write or update wiki pages under wiki/<kind>/<id>.md; each page you touch lists "
        f"`{source}` in its front matter `sources:`",
        f"- every fact line you write from it carries `(source: {source})`; never write a fact "
        "from any other source on these pages",
        "- link related pages with [[wikilinks]] or front matter `relations:`",
        "- run `tether wiki check` and fix what it reports for the pages you touched",
    ]
    if unattended:
        lines += [
            "- this is an unattended run: the capture manifest settles fidelity and authority; "
            "do not ask questions; when the pages are written, stop. tether marks the entry done.",
        ]
    else:
        lines += [
            "- confirm the key points with the user, and ask for fidelity and authority "
            "(never guess them)",
            "- when done: run `tether ingest end` and say the line(s) it prints, exactly as "
            "printed, then stop. Do not start the next entry yourself: the user resets the context "
            "(/clear) and starts the next run.",
            "- if the user explicitly asks to go on in this context: say the recommendation and "
            "its reason once, then follow (the user runs `tether ingest continue-here`, which "
            "gives the new run a new session id).",
        ]
    return "\n".join(lines) + "\n"
