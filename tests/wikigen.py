"""Generate a deterministic tether wiki for tests and benchmarks.

    python tests/wikigen.py OUT [--pages 300] [--seed 7]

The wiki has concept and episode pages with front matter (id, title,
description, sources, updated, relations), [[wikilinks]], basic-memory fact and
relation lines with source markers, sources in raw/, an index page and a stale
list. Every concept page is about one made-up topic word that appears nowhere
else except in links to it, so a question names its page exactly. Special pages:

- ``hub``: a concept with 16 typed relations (a question about it overflows B=12);
- ``isolated-N``: three pages nothing links to and that link nowhere (read directly).
"""

from __future__ import annotations

import argparse
import json
import random
from dataclasses import dataclass, field
from pathlib import Path

SYLLABLES = (
    "ka",
    "zo",
    "ri",
    "mun",
    "tel",
    "vex",
    "dra",
    "pol",
    "quin",
    "sar",
    "bel",
    "tor",
    "nix",
    "gal",
    "fen",
    "lum",
    "ory",
    "pek",
    "wat",
    "zim",
)
_FILLER_TEXT = (
    "the system keeps a record of each change and the team reviews it weekly while operators "
    "watch the dashboard for errors and latency under load during releases with careful notes "
    "about configuration backups storage network and access"
)
FILLER = _FILLER_TEXT.split()
RELATIONS = ("depends_on", "part_of", "extends", "contrasts_with")
HUB_RELATIONS = 16
STALE_EVERY = 15
SOURCES = 20
SEED = 7  # the wiki the tests share: another seed is another wiki


@dataclass
class GenPage:
    id: str
    kind: str  # concept | episode
    word: str
    source: str
    relations: list[tuple[str, str]] = field(default_factory=list)  # (type, target id)
    links: list[str] = field(default_factory=list)
    isolated: bool = False

    @property
    def path(self) -> str:
        return f"wiki/{self.kind}s/{self.id}.md"


@dataclass
class GenWiki:
    root: Path
    pages: dict[str, GenPage]
    stale: list[str]

    def word_of(self, page_id: str) -> str:
        return self.pages[page_id].word

    def by_word(self, word: str) -> GenPage:
        return next(p for p in self.pages.values() if p.word == word)


def _words(rng: random.Random, count: int) -> list[str]:
    out: list[str] = []
    seen: set[str] = set()
    while len(out) < count:
        word = "".join(rng.choice(SYLLABLES) for _ in range(3)) + rng.choice(SYLLABLES[:5])
        if word not in seen:
            seen.add(word)
            out.append(word)
    return out


def plan(pages: int, seed: int) -> tuple[dict[str, GenPage], list[str]]:
    rng = random.Random(seed)
    words = _words(rng, pages)
    result: dict[str, GenPage] = {}
    ordinary = pages - 4  # hub + 3 isolated
    for i in range(ordinary):
        kind = "episode" if i % 10 == 9 else "concept"
        page_id = f"{kind}-{i:05d}"
        result[page_id] = GenPage(page_id, kind, words[i], f"raw/source-{i % SOURCES:02d}.md")
    ids = list(result)
    for page in result.values():
        others = [x for x in rng.sample(ids, 4) if x != page.id][:3]
        page.relations = [(rng.choice(RELATIONS), others[0])]
        page.links = others[1:]
    hub = GenPage("hub", "concept", words[ordinary], "raw/source-00.md")
    hub.relations = [
        (RELATIONS[k % len(RELATIONS)], ids[k * 3 % len(ids)]) for k in range(HUB_RELATIONS)
    ]
    result[hub.id] = hub
    for n in range(3):
        page = GenPage(
            f"isolated-{n}",
            "concept",
            words[ordinary + 1 + n],
            f"raw/source-{n:02d}.md",
            isolated=True,
        )
        result[page.id] = page
    stale = [pid for k, pid in enumerate(ids) if k % STALE_EVERY == 4]
    return result, stale


def _body(page: GenPage, pages: dict[str, GenPage], rng: random.Random) -> str:
    filler = " ".join(rng.choice(FILLER) for _ in range(60))
    lines = [
        f"# {page.word.capitalize()}",
        "",
        f"{page.word.capitalize()} is a {page.kind} of this wiki. {filler}.",
        "",
        "## Facts",
        "",
        f"- [definition] {page.word} is tracked by the operators (source: {page.source})",
        f"- [metric] {page.word} latency stays under {rng.randint(5, 500)} ms "
        f"(source: {page.source})",
        "",
    ]
    if not page.isolated:
        lines.append("## Relations")
        lines.append("")
        for rel, target in page.relations[:1]:
            lines.append(f"- {rel} [[{target}]]")
        for target in page.links:
            lines.append(f"See also [[{target}]] for {pages[target].word}.")
        lines.append("")
    return "\n".join(lines)


def _front(page: GenPage, day: int) -> str:
    data: dict[str, object] = {
        "id": page.id,
        "title": f"{page.word.capitalize()} ({page.kind})",
        "description": f"What {page.word} is and how it behaves.",
        "sources": [page.source],
        "updated": f"2026-01-{day:02d}",
    }
    if not page.isolated and page.relations:
        data["relations"] = [{"type": r, "target": t} for r, t in page.relations]
    return "---\n" + json.dumps(data, indent=None, ensure_ascii=False) + "\n---\n"


def generate(root: Path, pages: int = 300, seed: int = SEED) -> GenWiki:
    """Write the wiki under ``root`` (which must not exist or be empty)."""
    if pages < 10:
        raise ValueError("at least 10 pages")
    planned, stale = plan(pages, seed)
    rng = random.Random(seed + 1)
    (root / "raw").mkdir(parents=True, exist_ok=True)
    for k in range(SOURCES):
        (root / "raw" / f"source-{k:02d}.md").write_text(f"# Source {k}\n\nCaptured notes {k}.\n")
    for folder in ("concepts", "episodes"):
        (root / "wiki" / folder).mkdir(parents=True, exist_ok=True)
    for n, page in enumerate(planned.values()):
        text = _front(page, n % 28 + 1) + _body(page, planned, rng)
        (root / page.path).write_text(text, encoding="utf-8")
    listed = [p for p in planned.values() if not p.isolated]
    index = ["---", "id: index", "title: Index", "---", "# Index", ""]
    index += [f"- [[{p.id}]]" for p in listed]
    (root / "wiki" / "index.md").write_text("\n".join(index) + "\n", encoding="utf-8")
    stale_doc = {
        "stale": [{"page": pid, "reason": "source changed", "since": "2026-02-01"} for pid in stale]
    }
    (root / "wiki" / "stale.json").write_text(json.dumps(stale_doc, indent=2) + "\n")
    (root / "incoming").mkdir(exist_ok=True)
    return GenWiki(root, planned, stale)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--pages", type=int, default=300)
    parser.add_argument("--seed", type=int, default=SEED)
    ns = parser.parse_args()
    wiki = generate(ns.out, ns.pages, ns.seed)
    print(f"{len(wiki.pages)} pages in {ns.out}")


if __name__ == "__main__":
    main()
