"""docs/reference/environment.md is the one table of the environment variables:
every ``TETHER_*`` name the source reads or sets is a row of it, with a reason to
exist, and every row is a name the source still uses."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "reference" / "environment.md"
# A name, or a prefix ending in "_" (the source builds the rest: TETHER_WAKE_<FIELD>);
# "TETHER_" alone is prose for all of them ("the TETHER_* variables").
NAME = re.compile(r"\bTETHER_[A-Z0-9_]*")
ALL = "TETHER_"


def _rows() -> dict[str, list[str]]:
    """First column (the name; ``PREFIX_*`` for a family) -> the other cells."""
    rows: dict[str, list[str]] = {}
    for line in PAGE.read_text(encoding="utf-8").splitlines():
        match = re.match(r"^\| `(TETHER_[A-Z0-9_]*\*?)` \|(.*)\|$", line)
        if match:
            rows[match.group(1)] = [cell.strip() for cell in match.group(2).split("|")]
    return rows


def _in_source() -> dict[str, set[str]]:
    """Each TETHER_* name (or prefix) in src/, with the files it is in."""
    found: dict[str, set[str]] = {}
    for path in (ROOT / "src").rglob("*.py"):
        for name in set(NAME.findall(path.read_text(encoding="utf-8"))) - {ALL}:
            found.setdefault(name, set()).add(str(path.relative_to(ROOT)))
    return found


def _documented(name: str, rows: dict[str, list[str]]) -> bool:
    if name.endswith("_"):
        return f"{name}*" in rows
    return name in rows or any(row.endswith("*") and name.startswith(row[:-1]) for row in rows)


def test_every_variable_in_the_source_is_in_the_table() -> None:
    rows = _rows()
    missing = {n: sorted(f) for n, f in _in_source().items() if not _documented(n, rows)}
    assert missing == {}, "add these to docs/reference/environment.md, with a reason"


def test_every_row_is_a_variable_the_source_uses_and_says_why() -> None:
    in_source = _in_source()
    rows = _rows()
    stale = [
        row
        for row in rows
        if not any(n == row or (row.endswith("*") and n.startswith(row[:-1])) for n in in_source)
    ]
    assert stale == [], "no longer in the source: remove from docs/reference/environment.md"
    without_reason = [row for row, cells in rows.items() if len(cells) != 3 or not cells[2]]
    assert without_reason == []
