"""Full-text search of the wiki, as rows a person or an agent reads."""

from __future__ import annotations

from typing import Any

from tether.wiki.index import Index
from tether.wiki.layout import Wiki


def search_rows(index: Index, wiki: Wiki, query: str, limit: int = 10) -> list[dict[str, Any]]:
    """The best pages for ``query`` (bm25), best first: id, path, title, score."""
    return [
        {
            "id": h.page.id,
            "path": wiki.root_relative(h.page.path),
            "title": h.page.title,
            "score": round(h.score, 4),
        }
        for h in index.search(query, limit)
    ]
