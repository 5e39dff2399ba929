"""One wiki page: front matter, body, links, facts and relations, with line numbers.

A page is a Markdown file. Front matter (YAML between ``---`` lines; an opening
``---`` never closed is reported and the file read as body) may carry
``id``, ``title``, ``description``, ``aliases``, ``sources``, ``updated`` and
``relations: [{type, target}]``. The body is read the way Obsidian reads it:
``[[Page]]``, ``[[Page|text]]``, ``[[Page#Heading]]``, ``[[#Heading]]``,
embeds ``![[file]]`` and relative Markdown links to ``.md`` files are links;
nothing inside fenced code, inline code or ``%% comments %%`` is. Lines in the
basic-memory style are read too: ``- [category] fact`` is a fact and
``- relation_type [[Target]]`` a typed relation. A fact line names its source
with ``(source: raw/name.md)`` (several: comma-separated).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any
from urllib.parse import unquote

from tether.frontmatter import split_front_matter

_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1")
_COMMENT = re.compile(r"%%.*?%%")
_WIKILINK = re.compile(r"(!?)\[\[([^\[\]\n]+?)\]\]")
_MDLINK = re.compile(r"(!?)\[([^\]\n]*)\]\(\s*<?([^)<>\s]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_BLOCK_ID = re.compile(r"\s\^([A-Za-z0-9-]+)\s*$")
_OBSERVATION = re.compile(r"^\s*[-*+]\s+\[([^\[\]\n]{2,})\]\s+(.+)$")
_RELATION = re.compile(
    r"^\s*[-*+]\s+([A-Za-z_][\w-]*)\s+\[\[([^\[\]\n]+?)\]\]\s*(?:\([^)]*\))?\s*$"
)
_SOURCE_MARKER = re.compile(r"\((?:source|sources|src):\s*([^)]+)\)", re.IGNORECASE)

BODY_LINK = "link"  # a [[wikilink]] or Markdown link in the body
EMBED = "embed"  # ![[...]]
RELATION_LINE = "relation"  # - type [[Target]]
FRONT_RELATION = "front"  # relations: in front matter


@dataclass(frozen=True)
class Link:
    """A reference from a page to a target (a page, a heading in it, or a file)."""

    target: str  # the link path as written ("" for a link into the same page)
    line: int  # 1-based line in the file
    kind: str = BODY_LINK  # BODY_LINK, EMBED, RELATION_LINE or FRONT_RELATION
    heading: str | None = None  # after '#': a heading, or '^blockid'
    text: str | None = None  # after '|': the shown text (or an embed size)
    rel_type: str = "links_to"
    raw: str = ""


@dataclass(frozen=True)
class Fact:
    """A fact line (``- [category] text``, or any line with a source marker)."""

    line: int
    text: str
    category: str | None
    sources: tuple[str, ...]  # names from (source: ...) markers, as written


@dataclass(frozen=True)
class Problem:
    line: int
    message: str


@dataclass
class Page:
    path: str  # relative to the wiki root, with "/" separators
    front: dict[str, Any]
    body: str
    body_line: int  # the file line the body starts on (1-based)
    title: str
    aliases: tuple[str, ...]
    description: str
    sources: tuple[str, ...]
    updated: str | None
    declared_id: str | None
    kind: str | None
    links: list[Link] = field(default_factory=list)
    facts: list[Fact] = field(default_factory=list)
    headings: list[str] = field(default_factory=list)
    block_ids: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    @property
    def stem(self) -> str:
        name = self.path.rsplit("/", 1)[-1]
        return name[:-3] if name.lower().endswith(".md") else name


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, list | tuple):
        return [str(v) for v in value if v is not None and str(v).strip()]
    return [str(value)]


def split_link(inner: str) -> tuple[str, str | None, str | None]:
    """``Page#Heading|text`` -> (``Page``, ``Heading``, ``text``); ``\\|`` (in tables) is ``|``."""
    inner = inner.replace("\\|", "|")
    target, bar, shown = inner.partition("|")
    path, hash_, heading = target.partition("#")
    return path.strip(), (heading.strip() or None) if hash_ else None, shown if bar else None


def sections(body: str) -> list[tuple[str | None, str]]:
    """The body cut at its headings: (heading, the text under it up to the next heading),
    the text before the first heading under ``None``; code and comments left out, as
    everywhere a page is read."""
    out: list[tuple[str | None, str]] = []
    heading: str | None = None
    text: list[str] = []
    for line in _strip_code(body.splitlines()):
        found = _HEADING.match(line)
        if found is None:
            if line.strip():
                text.append(line.strip())
            continue
        if heading is not None or text:
            out.append((heading, " ".join(text)))
        heading, text = found.group(2).strip(), []
    if heading is not None or text:
        out.append((heading, " ".join(text)))
    return out


def _strip_code(lines: list[str]) -> list[str]:
    """The lines with fenced blocks, inline code and %% comments blanked (line count kept)."""
    out: list[str] = []
    fence: str | None = None
    in_comment = False
    for line in lines:
        match = _FENCE.match(line)
        if fence is not None:
            if match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence):
                fence = None
            out.append("")
            continue
        if match:
            fence = match.group(1)
            out.append("")
            continue
        if "`" in line:
            line = _INLINE_CODE.sub(" ", line)
        if in_comment:
            if "%%" in line:
                line = line.split("%%", 1)[1]
                in_comment = False
            else:
                out.append("")
                continue
        if "%%" in line:
            line = _COMMENT.sub(" ", line)
            if "%%" in line:
                line = line.split("%%", 1)[0]
                in_comment = True
        out.append(line)
    return out


def _front_relations(front: dict[str, Any], problems: list[Problem]) -> list[Link]:
    relations = front.get("relations")
    if relations is None:
        return []
    if not isinstance(relations, list):
        problems.append(Problem(1, "front matter `relations` must be a list of {type, target}"))
        return []
    links: list[Link] = []
    for item in relations:
        if isinstance(item, dict) and item.get("target"):
            raw = str(item["target"]).strip()
            inner = raw[2:-2] if raw.startswith("[[") and raw.endswith("]]") else raw
            path, heading, text = split_link(inner)
            rel = str(item.get("type") or "relates_to")
            links.append(Link(path, 1, FRONT_RELATION, heading, text, rel, raw))
        else:
            problems.append(
                Problem(1, f"front matter relation {item!r} needs a `target` (and a `type`)")
            )
    return links


def _yaml() -> ModuleType:
    """PyYAML, imported at the first parse (a command that only reads the index needs none)."""
    import yaml

    return yaml


def _loader(yaml: ModuleType) -> Any:
    # the C loader is ~10x faster; fall back where libyaml is missing
    return getattr(yaml, "CSafeLoader", None) or yaml.SafeLoader


def parse_page(path: str, text: str) -> Page:
    """Parse one page's text; never raises for bad content (problems are recorded)."""
    problems: list[Problem] = []
    found = split_front_matter(text)
    front_text, body, body_line = found or (None, text.removeprefix("\ufeff"), 1)
    if found is None and text.lstrip("\ufeff").startswith(("---\n", "---\r\n")):
        problems.append(
            Problem(
                1,
                "front matter opened with `---` on line 1 is never closed (no second `---` "
                "line), so the whole file is read as body: its id, title, sources and "
                "relations are not read",
            )
        )
    front: dict[str, Any] = {}
    if front_text is not None and front_text.strip():
        yaml = _yaml()
        try:
            loaded = yaml.load(front_text, Loader=_loader(yaml))
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            line = 2 + (mark.line if mark is not None else 0)
            problems.append(Problem(line, f"front matter is not valid YAML: {exc}".splitlines()[0]))
            loaded = None
        if isinstance(loaded, dict):
            front = {str(k): v for k, v in loaded.items()}
        elif loaded is not None:
            problems.append(Problem(2, "front matter is not a mapping of keys to values"))
    lines = body.splitlines()
    title = str(front.get("title") or "").strip()
    kind = front.get("kind") or front.get("type")
    page = Page(
        path=path,
        front=front,
        body=body,
        body_line=body_line,
        title=title,
        aliases=tuple(_as_list(front.get("aliases")) + _as_list(front.get("alias"))),
        description=str(front.get("description") or "").strip(),
        sources=tuple(_as_list(front.get("sources")) + _as_list(front.get("source"))),
        updated=str(front["updated"]) if front.get("updated") is not None else None,
        declared_id=str(front["id"]).strip() if front.get("id") is not None else None,
        kind=str(kind) if isinstance(kind, str) else None,
        problems=problems,
    )
    page.links.extend(_front_relations(front, problems))
    _read_body(page, lines, body_line)
    if not page.title:
        page.title = page.stem
    return page


def _read_body(page: Page, lines: list[str], first: int) -> None:
    clean = _strip_code(lines)
    for offset, line in enumerate(clean):
        if not line:
            continue
        number = first + offset
        heading = _HEADING.match(line)
        if heading:
            page.headings.append(heading.group(2).strip())
            if not page.title and heading.group(1) == "#":
                page.title = heading.group(2).strip()
        block = _BLOCK_ID.search(line)
        if block:
            page.block_ids.append(block.group(1))
        relation = _RELATION.match(line)
        for match in _WIKILINK.finditer(line):
            target, head, text = split_link(match.group(2))
            if not target and head is None:
                continue  # [[ ]] or [[|x]]: Obsidian shows it as text
            if relation and match.start() == line.index("[["):
                page.links.append(
                    Link(
                        target, number, RELATION_LINE, head, text, relation.group(1), match.group(0)
                    )
                )
                continue
            kind = EMBED if match.group(1) else BODY_LINK
            page.links.append(Link(target, number, kind, head, text, "links_to", match.group(0)))
        if "](" in line:
            for match in _MDLINK.finditer(line):
                dest = match.group(3)
                if _SCHEME.match(dest) or dest.startswith("#"):
                    continue
                dest = unquote(dest)
                target, _, head = dest.partition("#")
                if not target.lower().endswith(".md"):
                    continue
                kind = EMBED if match.group(1) else BODY_LINK
                page.links.append(
                    Link(
                        target,
                        number,
                        kind,
                        head or None,
                        match.group(2),
                        "links_to",
                        match.group(0),
                    )
                )
        _read_fact(page, line, number)


def _read_fact(page: Page, line: str, number: int) -> None:
    observation = _OBSERVATION.match(line)
    markers = _SOURCE_MARKER.findall(line) if "(" in line else []
    if observation is None and not markers:
        return
    sources: list[str] = []
    for marker in markers:
        sources.extend(part.strip() for part in marker.split(",") if part.strip())
    category = observation.group(1).strip() if observation else None
    text = observation.group(2).strip() if observation else line.strip()
    page.facts.append(Fact(number, text, category, tuple(sources)))
