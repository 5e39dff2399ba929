"""Page parsing and link resolution, on hand-written pages."""

from __future__ import annotations

from tether.wiki.links import Resolver
from tether.wiki.page import BODY_LINK, EMBED, FRONT_RELATION, RELATION_LINE, parse_page

PAGE = """---
id: search-design
title: Search design
aliases: [Search, "Design of search"]
sources: [raw/a.md]
relations:
  - {type: part_of, target: "[[Architecture]]"}
---
# Search design

Uses [[Index|the index]] and [[Ranking#bm25]] and ![[diagram.png|300]].
Not links: `[[In code]]` and %% [[In comment]] %%.

```
[[In a fence]]
```

- [decision] bm25 over embeddings (source: raw/a.md)
- [risk] slow on huge wikis (source: raw/b.md, raw/a.md)
- [ ] a task, not a fact
- implements [[Query parser]]
See [the guide](Guides/Search%20guide.md#Setup) and [site](https://example.com).
"""


def test_front_matter_links_facts_and_relations() -> None:
    page = parse_page("concepts/search-design.md", PAGE)
    assert page.declared_id == "search-design"
    assert page.aliases == ("Search", "Design of search")
    assert page.sources == ("raw/a.md",)
    got = [(ln.kind, ln.target, ln.heading, ln.text, ln.rel_type, ln.line) for ln in page.links]
    assert got == [
        (FRONT_RELATION, "Architecture", None, None, "part_of", 1),
        (BODY_LINK, "Index", None, "the index", "links_to", 11),
        (BODY_LINK, "Ranking", "bm25", None, "links_to", 11),
        (EMBED, "diagram.png", None, "300", "links_to", 11),
        (RELATION_LINE, "Query parser", None, None, "implements", 21),
        (BODY_LINK, "Guides/Search guide.md", "Setup", "the guide", "links_to", 22),
    ]
    assert [(f.line, f.category, f.sources) for f in page.facts] == [
        (18, "decision", ("raw/a.md",)),
        (19, "risk", ("raw/b.md", "raw/a.md")),
    ]
    assert page.headings == ["Search design"]


def test_bad_front_matter_is_a_problem_not_a_crash() -> None:
    page = parse_page("x.md", "---\ntitle: [unclosed\n---\nbody [[Y]]\n")
    assert page.problems and page.problems[0].line >= 2
    assert "not valid YAML" in page.problems[0].message
    assert [ln.target for ln in page.links] == ["Y"]
    assert page.title == "x"


def test_table_escaped_pipe_and_empty_links() -> None:
    page = parse_page("t.md", "| a | [[Page\\|shown]] |\n[[ ]] [[#Local heading]]\n")
    assert [(ln.target, ln.text, ln.heading) for ln in page.links] == [
        ("Page", "shown", None),
        ("", None, "Local heading"),
    ]


def test_resolution_follows_obsidian_rules() -> None:
    files = [
        "Home.md",
        "Notes/Alpha.md",
        "Archive/Alpha.md",
        "Deep/Projects/Plan.md",
        "Projects/Plan.md",
        "img/diagram.png",
        "Notes/Beta.md",
    ]
    r = Resolver(files, [("Notes/Beta.md", "Second letter")])

    def to(target: str, source: str | None = None) -> tuple[str, str] | None:
        found = r.resolve(target, source)
        return None if found is None else (found.path, found.how)

    assert to("home") == ("Home.md", "name")  # case-insensitive
    assert to("Home.md") == ("Home.md", "name")
    # two Alphas: the one in the linking page's folder, else the shortest path
    assert to("Alpha", "Archive/Index.md") == ("Archive/Alpha.md", "name")
    assert to("Alpha", "Home.md") == ("Notes/Alpha.md", "name")
    assert to("Projects/Plan") == ("Projects/Plan.md", "path")
    assert to("../Notes/Beta", "Archive/x.md") == ("Notes/Beta.md", "relative")
    assert to("second letter") == ("Notes/Beta.md", "alias")
    assert to("diagram.png") == ("img/diagram.png", "name")
    assert to("Deep/Projects/Plan.md") == ("Deep/Projects/Plan.md", "path")
    assert to("Missing") is None
    assert to("../../etc/passwd", "Notes/x.md") is None
    assert to("", "Notes/Beta.md") == ("Notes/Beta.md", "self")
