"""Terminal output helpers shared by commands (rich is imported lazily)."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, sort_keys=False, default=str) + "\n")


def print_table(
    title: str | None,
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    whole: Sequence[str] = (),
) -> None:
    """A table for people; the ``whole`` columns (ids to copy) are never cut or wrapped."""
    from rich.console import Console
    from rich.table import Table

    cells = [["" if v is None else str(v) for v in row] for row in rows]
    table = Table(title=title, show_header=True, header_style="bold")
    for index, column in enumerate(columns):
        if column in whole:
            widest = max([len(column), *(len(row[index]) for row in cells)])
            table.add_column(column, no_wrap=True, min_width=widest)
        else:
            table.add_column(column)
    for row in cells:
        table.add_row(*row)
    Console(soft_wrap=True).print(table)
