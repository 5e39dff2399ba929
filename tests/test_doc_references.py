"""References to documents point at documents in the repository.

The code once cited a specification and a design note kept outside the
repository ("SPEC C9", "DESIGN"); a reader of the code could not follow them.
What still holds of them is in ``docs/``. So: no such citation comes back, and
every ``docs/….md`` path (with its ``#anchor``) named in the source, the tests
or ARCHITECTURE.md exists.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUTSIDE = re.compile(r"\bSPEC(?: [A-F][0-9]*\b|\b(?=[ :]))|\bDESIGN\b")
DOC_PATH = re.compile(
    r"\bdocs/(?:tutorial|how-to|reference|explanation)/[a-z0-9_-]+\.md(?:#[a-z0-9-]+)?"
)


def _texts() -> list[Path]:
    return [
        *sorted((ROOT / "src").rglob("*.py")),
        *sorted((ROOT / "tests").rglob("*.py")),
        *sorted((ROOT / "bench").rglob("*.py")),
        *sorted((ROOT / "docs").rglob("*.md")),
        ROOT / "ARCHITECTURE.md",
        ROOT / "README.md",
    ]


def anchors(page: Path) -> set[str]:
    """The heading anchors of a Markdown page, as GitHub makes them."""
    found = set()
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            found.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return found


def test_no_reference_to_a_document_outside_the_repository() -> None:
    here = Path(__file__)
    cited = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
        for path in _texts()
        if path != here
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if OUTSIDE.search(line)
    ]
    assert cited == [], "point these at a page in docs/ instead"


def test_every_docs_path_named_exists() -> None:
    broken = []
    for path in _texts():
        for ref in DOC_PATH.findall(path.read_text(encoding="utf-8")):
            page, _, anchor = ref.partition("#")
            target = ROOT / page
            if not target.is_file() or (anchor and anchor not in anchors(target)):
                broken.append(f"{path.relative_to(ROOT)}: {ref}")
    assert broken == []


def test_every_link_between_pages_lands() -> None:
    """A Markdown link to a page of the repository (and its anchor) resolves."""
    link = re.compile(r"\]\(((?!https?:)[^)#\s]+\.md)(?:#([^)\s]+))?\)")
    broken = []
    pages = [*sorted((ROOT / "docs").rglob("*.md")), ROOT / "ARCHITECTURE.md", ROOT / "README.md"]
    for page in pages:
        prose = re.sub(r"^```.*?^```$", "", page.read_text(encoding="utf-8"), flags=re.M | re.S)
        prose = re.sub(r"`[^`\n]*`", "", prose)  # examples in code spans are no links
        for target, anchor in link.findall(prose):
            resolved = (page.parent / target).resolve()
            if not resolved.is_file() or (anchor and anchor not in anchors(resolved)):
                broken.append(f"{page.relative_to(ROOT)}: {target}{'#' + anchor if anchor else ''}")
    assert broken == []
