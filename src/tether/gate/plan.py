"""Plan files: where unit boundaries are recorded.

A plan is a Markdown file. Each unit boundary is one line that starts (after a
list marker, an optional checkbox, or a heading marker) with ``unit:`` and the
unit's id::

    # Plan: ingest the March sources

    - [ ] unit: source-a  Ingest incoming/a.pdf
    - [x] unit: source-b  Ingest incoming/b.pdf
    ## unit: ticket-42

Ids are letters, digits and ``. _ / -``, unique within the plan. A checked box
(``[x]``) marks the unit done. Everything else in the file is free text.
"""

from __future__ import annotations

import os
import re
from difflib import get_close_matches

_UNIT_LINE = re.compile(
    r"^\s*(?:[-*+]\s+(?:\[(?P<mark>[ xX])\]\s+)?|#{1,6}\s+)unit:\s*"
    r"(?P<id>[A-Za-z0-9][A-Za-z0-9._/-]*)(?P<rest>.*)$"
)
MAX_PLAN_BYTES = 4 * 1024 * 1024


class PlanError(Exception):
    """The plan file is missing, unreadable, malformed, or lacks the unit."""


class Unit:
    __slots__ = ("done", "id", "line", "title")

    def __init__(self, unit_id: str, line: int, done: bool, title: str) -> None:
        self.id = unit_id
        self.line = line
        self.done = done
        self.title = title

    def __repr__(self) -> str:
        return f"Unit({self.id!r}, line={self.line}, done={self.done})"


def parse_plan(text: str, source: str = "<plan>") -> list[Unit]:
    units: list[Unit] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        match = _UNIT_LINE.match(line)
        if match is None:
            continue
        unit_id = match.group("id")
        if unit_id in seen:
            raise PlanError(
                f"{source}:{number}: unit {unit_id!r} is recorded twice "
                f"(first on line {seen[unit_id]}); unit ids must be unique"
            )
        seen[unit_id] = number
        mark = match.group("mark")
        title = match.group("rest").strip().lstrip("—-:").strip()
        units.append(Unit(unit_id, number, mark in ("x", "X"), title))
    return units


def read_plan(path: str) -> list[Unit]:
    try:
        size = os.path.getsize(path)
        if size > MAX_PLAN_BYTES:
            raise PlanError(f"{path} is {size} bytes; a plan file is at most {MAX_PLAN_BYTES}")
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except FileNotFoundError as exc:
        raise PlanError(f"plan file {path} does not exist") from exc
    except UnicodeDecodeError as exc:
        raise PlanError(f"plan file {path} is not UTF-8 text ({exc})") from exc
    except OSError as exc:
        raise PlanError(f"cannot read plan file {path}: {exc}") from exc
    return parse_plan(text, path)


def find_unit(path: str, unit_id: str) -> Unit:
    """The recorded boundary ``unit_id`` in the plan at ``path``."""
    units = read_plan(path)
    for unit in units:
        if unit.id == unit_id:
            return unit
    if not units:
        raise PlanError(
            f"{path} records no unit boundaries; write one line per unit, "
            f"like '- [ ] unit: {unit_id}  what it is'"
        )
    known = [unit.id for unit in units]
    hint = get_close_matches(unit_id, known, n=1)
    suggestion = f" Did you mean {hint[0]!r}?" if hint else ""
    raise PlanError(
        f"unit {unit_id!r} is not a recorded boundary in {path}.{suggestion} "
        f"Recorded: {', '.join(known)}."
    )
