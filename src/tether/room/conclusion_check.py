"""W04: check a room's conclusion against what the room really read.

Rules (each broken rule is one violation with its line):

- at most 500 words (the session stamp is no claim and not counted);
- every claim (a paragraph or a list item) cites a page as ``[[page]]``; a
  ``[[…]]`` inside inline code or a fenced code block shows syntax and is no
  citation;
- every cited page was read in this room (per the room's read log);
- a cited page on the stale list is flagged: the word "stale" in the same
  claim, or a ``stale: [[page]]`` line;
- ``budget reached, not read: <list>`` is present exactly when the room hit its
  budget (a read was refused for it) and names every refused page;
- ``missing: <what>`` names something, and is present when a listed page could
  not be read.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any

from tether.core.session_stamp import is_stamp
from tether.room.state import ReadSummary, Room
from tether.wiki.page import split_link

MAX_WORDS = 500
BUDGET_LINE = re.compile(r"^\s*(?:[-*]\s+)?budget reached, not read:\s*(?P<list>.*)$", re.I)
MISSING_LINE = re.compile(r"^\s*(?:[-*]\s+)?missing:\s*(?P<what>.*)$", re.I)
STALE_LINE = re.compile(r"^\s*(?:[-*]\s+)?stale:\s*(?P<list>.*)$", re.I)
CITATION = re.compile(r"\[\[([^\[\]\n]+?)\]\]")
_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_RULE = re.compile(r"^\s*(?:-{3,}|\*{3,}|_{3,})\s*$")
# An inline code span: a run of backticks, then anything up to the same run.
_CODE_SPAN = re.compile(r"(`+)(?!`)(.+?)(?<!`)\1(?!`)")


def citations(text: str) -> list[str]:
    """The ``[[…]]`` links of ``text`` outside inline code spans."""
    return CITATION.findall(_CODE_SPAN.sub(" ", text))


@dataclass(frozen=True)
class Violation:
    line: int
    rule: str
    message: str

    def __str__(self) -> str:
        where = f"line {self.line}: " if self.line else ""
        return f"{where}{self.message}"


@dataclass
class ConclusionCheck:
    violations: list[Violation]
    words: int
    cited: list[str]
    budget_hit: bool
    has_missing: bool

    @property
    def ok(self) -> bool:
        return not self.violations

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "words": self.words,
            "cited": self.cited,
            "budget_hit": self.budget_hit,
            "has_missing": self.has_missing,
            "violations": [asdict(v) for v in self.violations],
        }


def _claims(lines: list[str]) -> list[tuple[int, str]]:
    """(first line, text) of each paragraph or list item that is a claim."""
    claims: list[tuple[int, str]] = []
    current: list[str] = []
    start = 0
    in_fence = False

    def close() -> None:
        if current:
            claims.append((start, " ".join(current)))
            current.clear()

    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            in_fence = not in_fence
            close()
            continue
        if in_fence:
            continue
        special = (
            not stripped
            or stripped.startswith("#")
            or _RULE.match(line)
            or BUDGET_LINE.match(line)
            or MISSING_LINE.match(line)
            or STALE_LINE.match(line)
            or is_stamp(line)
        )
        if special:
            close()
            continue
        if _ITEM.match(line) or not current:
            close()
            start = number
        current.append(stripped)
    close()
    return claims


def check_conclusion(text: str, room: Room) -> ConclusionCheck:
    lines = text.splitlines()
    out: list[Violation] = []
    words = sum(len(line.split()) for line in lines if not is_stamp(line))
    if words > MAX_WORDS:
        out.append(
            Violation(
                0, "words", f"the conclusion has {words} words; at most {MAX_WORDS} are allowed"
            )
        )
    summary = room.summary()
    cited = _citation_rules(lines, summary, room, out)
    out.extend(_budget_rules(lines, summary, room))
    has_missing = _missing_rules(lines, summary, out)
    out.sort(key=lambda v: v.line)
    return ConclusionCheck(out, words, list(dict.fromkeys(cited)), summary.budget_hit, has_missing)


def _stale_flagged(lines: list[str], room: Room) -> set[str]:
    """The pages a ``stale:`` line names (lower-case ids)."""
    flagged: set[str] = set()
    for line in lines:
        match = STALE_LINE.match(line)
        if match:
            for inner in citations(line) or match["list"].split(","):
                entry = room.identify(split_link(inner)[0] or inner)
                if entry is not None:
                    flagged.add(entry.id.lower())
    return flagged


def _citation_rules(
    lines: list[str], summary: ReadSummary, room: Room, out: list[Violation]
) -> list[str]:
    """Every claim cites a page the room read, a stale one flagged; the pages cited."""
    read = {pid.lower() for pid in summary.read}
    stale = {p.id.lower() for p in room.pages + room.cut if p.stale}
    stale_flagged = _stale_flagged(lines, room)
    cited: list[str] = []
    for number, claim in _claims(lines):
        links = citations(claim)
        if not links:
            out.append(
                Violation(
                    number, "uncited", f"claim without a [[page]] citation: {_short(claim)!r}"
                )
            )
            continue
        for inner in links:
            target = split_link(inner)[0]
            entry = room.identify(target)
            if entry is None or entry.id.lower() not in read:
                shown = entry.id if entry else target
                read_list = ", ".join(summary.read) or "none"
                out.append(
                    Violation(
                        number,
                        "unread",
                        f"cites [[{shown}]], which this room did not read (read: {read_list})",
                    )
                )
                continue
            cited.append(entry.id)
            key = entry.id.lower()
            if key in stale and key not in stale_flagged and "stale" not in claim.lower():
                out.append(
                    Violation(
                        number,
                        "stale",
                        f"cites stale page [[{entry.id}]] without flagging it: "
                        f"write 'stale' in the claim or a `stale: [[{entry.id}]]` "
                        f"line",
                    )
                )
    return cited


def _missing_rules(lines: list[str], summary: ReadSummary, out: list[Violation]) -> bool:
    """Pages that could not be read are named on a ``missing:`` line; whether one is there."""
    has_missing = False
    for number, line in enumerate(lines, 1):
        match = MISSING_LINE.match(line)
        if match:
            has_missing = True
            if not match["what"].strip():
                out.append(
                    Violation(
                        number, "missing", "`missing:` names nothing; say what data was missing"
                    )
                )
    if summary.missing and not has_missing:
        gone = ", ".join(summary.missing)
        out.append(
            Violation(
                0,
                "missing",
                f"pages on the list could not be read ({gone}) but the conclusion "
                f"has no `missing: <what>` line",
            )
        )
    return has_missing


def _budget_rules(lines: list[str], summary: ReadSummary, room: Room) -> list[Violation]:
    found = [(n, BUDGET_LINE.match(line)) for n, line in enumerate(lines, 1)]
    budget_lines = [(n, m) for n, m in found if m is not None]
    refused: list[str] = summary.refused_budget
    if summary.budget_hit and not budget_lines:
        return [
            Violation(
                0,
                "budget",
                f"the room hit its budget of {room.budget} pages (refused: "
                f"{', '.join(refused)}) but the conclusion has no "
                f"`budget reached, not read: <list>` line",
            )
        ]
    if not summary.budget_hit and budget_lines:
        return [
            Violation(
                budget_lines[0][0],
                "budget",
                "the conclusion says the budget was reached, but the room never hit "
                f"it ({summary.used} of {room.budget} pages read, none refused)",
            )
        ]
    out: list[Violation] = []
    for number, match in budget_lines:
        named = {_name_key(part) for part in match["list"].split(",")}
        named |= {_name_key(x) for x in citations(match["list"])}
        left_out = [r for r in refused if _name_key(r) not in named]
        if left_out:
            out.append(
                Violation(
                    number,
                    "budget",
                    f"the budget line does not name every page the budget refused: "
                    f"{', '.join(left_out)}",
                )
            )
    return out


def _name_key(text: str) -> str:
    text = text.strip().strip("`").strip()
    if text.startswith("[[") and text.endswith("]]"):
        text = split_link(text[2:-2])[0]
    return text.lower()


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
