"""Full-text search of the wiki, as rows a person or an agent reads."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from tether.wiki.index import Index
from tether.wiki.layout import Wiki


@dataclass(frozen=True)
class SearchHit:
    """One page found: its id, its path under the wiki root, its title, its bm25 score."""

    id: str
    path: str
    title: str
    score: float  # rounded to 4 places

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def search_rows(index: Index, wiki: Wiki, query: str, limit: int = 10) -> list[SearchHit]:
    """The best pages for ``query`` (bm25), best first."""
    return [
        SearchHit(
            id=h.page.id,
            path=wiki.root_relative(h.page.path),
            title=h.page.title,
            score=round(h.score, 4),
        )
        for h in index.search(query, limit)
    ]
