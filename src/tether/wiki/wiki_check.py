"""``wiki check``: provenance, broken links, orphan pages and malformed files, with file:line.

Provenance applies to a tether wiki (one with ``raw/``): every page but the
index names at least one source in ``raw/`` (front matter ``sources:``); every
source it names exists there; every fact line's ``(source: ...)`` marker points
at an existing source; and a fact may cite only sources its page lists (a fact
from source A on a page made from source B is exactly the mix-up one source per
run prevents). A plain vault has no ``raw/``, so provenance is skipped and said
so.
"""

from __future__ import annotations

import posixpath
from collections import defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path

from tether.core.errors import PathEscapeError
from tether.fs import resolve_inside
from tether.wiki.index import Index
from tether.wiki.index_schema import Edge, PageDetails, PageRow, describe_size
from tether.wiki.layout import RAW_DIR, Wiki, is_page, unsafe_id
from tether.wiki.page import Fact
from tether.wiki.stale import stale_pages

KINDS = (
    "front-matter",
    "no-source",
    "missing-source",
    "unlisted-source",
    "broken-link",
    "missing-file",
    "orphan",
    "outside-root",
    "too-large",
    "duplicate-id",
    "unsafe-id",
    "stale-unknown",
)


@dataclass(frozen=True)
class Finding:
    path: str  # relative to the wiki root
    line: int
    kind: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.kind}: {self.message}"


@dataclass
class CheckResult:
    violations: list[Finding]
    warnings: list[Finding]
    pages: int
    provenance_checked: bool
    skipped: list[str]

    @property
    def ok(self) -> bool:
        return not self.violations

    def to_dict(self) -> dict[str, object]:
        return {
            "ok": self.ok,
            "pages": self.pages,
            "provenance_checked": self.provenance_checked,
            "skipped": self.skipped,
            "violations": [asdict(v) for v in self.violations],
            "warnings": [asdict(w) for w in self.warnings],
        }


def _heading_key(text: str) -> str:
    """Headings compare as Obsidian links them: case, punctuation and spacing ignored."""
    return " ".join("".join(c if c.isalnum() else " " for c in text).split()).lower()


def check(
    index: Index, escaped: list[str] | None = None, skip: frozenset[str] = frozenset()
) -> CheckResult:
    """Check an up-to-date index (call ``index.update`` first)."""
    wiki = index.wiki
    out: list[Finding] = []
    warnings: list[Finding] = []
    rows = index.pages()
    out.extend(_unread_pages(index, escaped or []))
    details = {r.path: d for r in rows if (d := index.details(r.path)) is not None}
    # A page the index could not read has no details; every later step skips it.
    rows = [r for r in rows if r.path in details]
    out.extend(_page_findings(wiki, rows, details))
    provenance = wiki.raw_dir.is_dir()
    skipped: list[str] = []
    if provenance and "provenance" not in skip:
        for r in rows:
            out.extend(_provenance(index, r.path, r.sources, details[r.path].facts))
    elif not provenance:
        skipped.append(f"provenance: no {RAW_DIR}/ folder, so this is not a tether wiki")
    inbound = _link_findings(index, details, out, warnings)
    if "orphan" not in skip:
        out.extend(_orphans(wiki, rows, inbound))
    out.extend(_stale_entries(index))
    out = [f for f in out if f.kind not in skip]
    out.sort(key=lambda f: (f.path, f.line, f.kind))
    warnings.sort(key=lambda f: (f.path, f.line))
    return CheckResult(out, warnings, len(rows), provenance and "provenance" not in skip, skipped)


def _unread_pages(index: Index, escaped: list[str]) -> list[Finding]:
    """Files the index left out (escaping symlinks, pages over the size cap), so none is unseen."""
    rel = index.wiki.root_relative
    out = [
        Finding(rel(path), 1, "outside-root", "symlink resolves outside the wiki; it is not read")
        for path in escaped
    ]
    for large in index.skipped():
        out.append(
            Finding(
                rel(large.path),
                1,
                "too-large",
                f"the page is {describe_size(large.size)}, over the indexing cap of "
                f"{describe_size(index.max_page_bytes)} ([wiki] max_page_bytes): it is not "
                f"indexed, searched, checked or linked. Split it, or raise the cap.",
            )
        )
    return out


def _page_findings(
    wiki: Wiki, rows: list[PageRow], details: dict[str, PageDetails]
) -> list[Finding]:
    """Front-matter problems and declared ids that are unsafe or already taken, page by page."""
    rel = wiki.root_relative
    out: list[Finding] = []
    # Ids compare case-blind; the first page (in index order) to declare one keeps it.
    seen_ids: dict[str, str] = {}
    for r in rows:
        for problem in details[r.path].problems:
            out.append(Finding(rel(r.path), problem.line, "front-matter", problem.message))
        declared = details[r.path].declared_id
        why = unsafe_id(declared) if declared else None
        if why is not None:
            out.append(
                Finding(
                    rel(r.path),
                    _front_key_line(wiki.pages_dir / r.path, "id"),
                    "unsafe-id",
                    f"id {declared!r} reads as a path ({why}); it is not used, the page is "
                    f"known as {r.id!r}. Give it a plain id such as {r.id!r}.",
                )
            )
        elif declared:
            first = seen_ids.setdefault(declared.lower(), r.path)
            if first != r.path:
                out.append(
                    Finding(
                        rel(r.path),
                        1,
                        "duplicate-id",
                        f"id {declared!r} is already used by {rel(first)}",
                    )
                )
    return out


def _link_findings(
    index: Index,
    details: dict[str, PageDetails],
    out: list[Finding],
    warnings: list[Finding],
) -> dict[str, int]:
    """Broken links and missing files into ``out``, missing headings into ``warnings``.

    Returns how many links from other pages reach each page, which the orphan step needs.
    """
    rel = index.wiki.root_relative
    inbound: dict[str, int] = defaultdict(int)
    for edge in index.all_edges():
        if edge.dst is None:
            out.append(_unresolved_link(edge, rel(edge.src)))
            continue
        if edge.dst != edge.src:
            inbound[edge.dst] += 1
        # A ``^block`` reference names no heading, so only real headings are checked.
        if edge.heading and not edge.heading.startswith("^") and edge.dst in details:
            wanted = _heading_key(edge.heading.split("#")[-1])
            have = {_heading_key(h) for h in details[edge.dst].headings}
            if wanted not in have:
                warnings.append(
                    Finding(
                        rel(edge.src),
                        edge.line,
                        "missing-heading",
                        f"{edge.raw}: {rel(edge.dst)} has no heading {edge.heading!r}",
                    )
                )
    return inbound


def _unresolved_link(edge: Edge, src: str) -> Finding:
    """A link that reaches nothing: a broken page link, or a missing attachment file."""
    target = edge.target + (f"#{edge.heading}" if edge.heading else "")
    # A target with a non-page extension is a file (an image, a PDF), not a page.
    if is_page(edge.target) or "." not in posixpath.basename(edge.target):
        return Finding(
            src,
            edge.line,
            "broken-link",
            f"{edge.raw} points at no page (no file, name or alias {target!r})",
        )
    return Finding(
        src, edge.line, "missing-file", f"{edge.raw}: no file {edge.target!r} in the wiki"
    )


def _orphans(wiki: Wiki, rows: list[PageRow], inbound: dict[str, int]) -> list[Finding]:
    """Pages no other page links to; the index page is the entry point, so it never is one."""
    index_page = wiki.index_page
    return [
        Finding(wiki.root_relative(r.path), 1, "orphan", "no other page links here")
        for r in rows
        if not inbound.get(r.path) and r.path != index_page
    ]


def _source_file(raw_dir: Path, name: str) -> Path | None:
    """The file a source name means (``raw/x.md`` or ``x.md``), None when it escapes raw/."""
    name = name.strip()
    if name.startswith(f"{RAW_DIR}/"):
        name = name[len(RAW_DIR) + 1 :]
    try:
        return resolve_inside(raw_dir, name)
    except PathEscapeError:
        return None


def _norm(name: str) -> str:
    name = name.strip()
    return name[len(RAW_DIR) + 1 :] if name.startswith(f"{RAW_DIR}/") else name


def _line_of(file: Path, text: str) -> int:
    try:
        for number, line in enumerate(file.read_text("utf-8", "replace").splitlines(), 1):
            if text in line:
                return number
    except OSError:
        pass
    return 1


def _front_key_line(file: Path, key: str) -> int:
    """The line of ``key:`` in a page's front matter (1 when it cannot be found)."""
    try:
        with file.open(encoding="utf-8", errors="replace") as handle:
            for number, line in enumerate(handle, 1):
                if number > 1 and line.rstrip("\r\n") in ("---", "..."):
                    break
                if line.startswith(f"{key}:") or line.startswith(f"{key} :"):
                    return number
    except OSError:
        pass
    return 1


def _provenance(
    index: Index, path: str, sources: tuple[str, ...], facts: tuple[Fact, ...]
) -> list[Finding]:
    wiki = index.wiki
    where = wiki.root_relative(path)
    if path == wiki.index_page:
        return []
    out: list[Finding] = []
    file = wiki.pages_dir / path
    if not sources:
        out.append(
            Finding(
                where,
                1,
                "no-source",
                f"the page names no source; add `sources: [{RAW_DIR}/<file>]` to its front matter",
            )
        )
    for name in sources:
        found = _source_file(wiki.raw_dir, name)
        if found is None or not found.is_file():
            why = "is outside raw/" if found is None else f"is not in {RAW_DIR}/"
            out.append(
                Finding(where, _line_of(file, name), "missing-source", f"source {name!r} {why}")
            )
    listed = {_norm(s) for s in sources}
    for fact in facts:
        line = fact.line
        for name in fact.sources:
            found = _source_file(wiki.raw_dir, name)
            if found is None or not found.is_file():
                why = "is outside raw/" if found is None else f"is not in {RAW_DIR}/"
                out.append(
                    Finding(
                        where, line, "missing-source", f"fact cites source {name!r}, which {why}"
                    )
                )
            elif _norm(name) not in listed:
                out.append(
                    Finding(
                        where,
                        line,
                        "unlisted-source",
                        f"fact cites source {name!r}, which the page does not list "
                        f"in `sources:` (a fact from another source?)",
                    )
                )
    return out


def _stale_entries(index: Index) -> list[Finding]:
    wiki = index.wiki
    out: list[Finding] = []
    stale_rel = wiki.root_relative(wiki.stale_path.name)
    for entry, row in stale_pages(index):
        if row is None:
            out.append(
                Finding(
                    stale_rel,
                    _line_of(wiki.stale_path, entry.page),
                    "stale-unknown",
                    f"stale entry {entry.page!r} names no page",
                )
            )
    return out
