"""Terminal text for ``tether status``: styled spans, tables and boxed panels, nothing else.

Speed path kept by bench/status.py: ``tether status`` must answer within twice
``tether --help``; importing rich and laying its tables out cost more than that
whole margin, so the status screen is drawn here with plain strings and ANSI
colours (off when the output is not a terminal, or with ``NO_COLOR``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import IO

SGR = {
    "bold": "1",
    "dim": "2",
    "red": "31",
    "green": "32",
    "yellow": "33",
    "blue": "34",
    "magenta": "35",
    "cyan": "36",
}
ELLIPSIS = "…"


def wants_colour(stream: IO[str]) -> bool:
    """Colours for a terminal, unless ``NO_COLOR`` is set or the terminal is dumb."""
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def terminal_size(stream: IO[str]) -> tuple[int, int]:
    """Columns and lines: ``COLUMNS``/``LINES`` when set, else the terminal's, else 80x24
    (what ``shutil.get_terminal_size`` does, without importing shutil and its compressors)."""
    size = [80, 24]
    try:
        found = os.get_terminal_size(stream.fileno())
        size = [found.columns, found.lines]
    except (AttributeError, ValueError, OSError):
        pass
    for n, name in enumerate(("COLUMNS", "LINES")):
        value = os.environ.get(name, "")
        if value.isdigit() and int(value) > 0:
            size[n] = int(value)
    return size[0], size[1]


@dataclass
class Text:
    """One line of text made of spans, each with an optional style (``"bold red"``)."""

    spans: list[tuple[str, str | None]] = field(default_factory=list)

    @classmethod
    def of(cls, text: str, style: str | None = None) -> Text:
        return cls([(text, style)]) if text else cls()

    def append(self, text: str, style: str | None = None) -> Text:
        if text:
            self.spans.append((text, style))
        return self

    @property
    def plain(self) -> str:
        return "".join(text for text, _ in self.spans)

    def __len__(self) -> int:
        return sum(len(text) for text, _ in self.spans)

    def slice(self, start: int, end: int) -> Text:
        out = Text()
        at = 0
        for text, style in self.spans:
            lo, hi = max(start, at), min(end, at + len(text))
            if lo < hi:
                out.spans.append((text[lo - at : hi - at], style))
            at += len(text)
        return out

    def fold(self, width: int) -> list[Text]:
        """The text cut into lines of at most ``width`` characters, at a space where there
        is one in the line's second half (nothing is dropped)."""
        size = len(self)
        if size <= width or width <= 0:
            return [self]
        plain = self.plain
        lines: list[Text] = []
        start = 0
        while size - start > width:
            space = plain.rfind(" ", start + width // 2, start + width + 1)
            end = space if space > start else start + width
            lines.append(self.slice(start, end))
            start = end + 1 if space > start else end
        lines.append(self.slice(start, size))
        return lines

    def crop(self, width: int) -> Text:
        if len(self) <= width:
            return self
        return self.slice(0, max(0, width - 1)).append(ELLIPSIS, "dim")

    def render(self, colour: bool) -> str:
        if not colour:
            return self.plain
        out = []
        for text, style in self.spans:
            codes = ";".join(SGR[s] for s in (style or "").split() if s in SGR)
            out.append(f"\x1b[{codes}m{text}\x1b[0m" if codes else text)
        return "".join(out)


Cell = Text | str


def as_text(cell: Cell) -> Text:
    return cell if isinstance(cell, Text) else Text.of(cell)


class Table:
    """Columns sized to their content; when too wide, the widest columns fold their cells."""

    GAP = 2
    MIN_WIDTH = 6

    def __init__(self, *headers: str, keep: Iterable[int] = (0,)) -> None:
        self.headers = [Text.of(h, "bold") for h in headers]
        self.keep = set(keep)  # columns never narrowed (ids people copy)
        self.rows: list[list[Text]] = []

    def add_row(self, *cells: Cell) -> None:
        self.rows.append([as_text(c) for c in cells])

    def lines(self, width: int) -> list[Text]:
        widths = [
            max([len(h), *(len(r[i]) for r in self.rows)]) for i, h in enumerate(self.headers)
        ]
        over = sum(widths) + self.GAP * (len(widths) - 1) - width
        for spared in (self.keep, {0}):  # first the others; then all but the first column
            while over > 0:
                narrowable = [
                    i for i, w in enumerate(widths) if i not in spared and w > self.MIN_WIDTH
                ]
                if not narrowable:
                    break
                widest = max(narrowable, key=lambda i: widths[i])
                widths[widest] -= 1
                over -= 1
        out: list[Text] = []
        for row in (self.headers, *self.rows):
            folded = [cell.fold(widths[i]) for i, cell in enumerate(row)]
            for n in range(max(len(f) for f in folded)):
                out.append(self._line([f[n] if n < len(f) else Text() for f in folded], widths))
        return out

    def _line(self, cells: Sequence[Text], widths: Sequence[int]) -> Text:
        line = Text()
        last = len(cells) - 1
        for i, cell in enumerate(cells):
            line.spans += cell.spans
            if i < last:
                line.append(" " * (widths[i] - len(cell) + self.GAP))
        return line


Block = Text | Table | str


def block_lines(blocks: Sequence[Block], width: int) -> list[Text]:
    out: list[Text] = []
    for block in blocks:
        if isinstance(block, Table):
            out += block.lines(width)
        else:
            out += as_text(block).fold(width)
    return out


def boxed(title: str, blocks: Sequence[Block], width: int) -> list[Text]:
    """A panel: the blocks inside a rounded box with the title in its top edge."""
    inner = max(10, width - 4)
    top = Text.of("╭─ ").append(title, "bold").append(" ")
    top.append("─" * max(0, width - len(top) - 1) + "╮")
    out = [top]
    for line in block_lines(blocks, inner):
        body = line.crop(inner)
        row = Text.of("│ ")
        row.spans += body.spans
        out.append(row.append(" " * (inner - len(body)) + " │"))
    out.append(Text.of("╰" + "─" * max(0, width - 2) + "╯"))
    return out


def render(lines: Sequence[Text], colour: bool) -> str:
    return "".join(line.render(colour) + "\n" for line in lines)
