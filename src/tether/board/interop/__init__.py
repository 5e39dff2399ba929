"""Import and export of the task files agent users already keep.

- beads (``.beads/issues.jsonl``, one JSON issue per line): ``tether.board.interop.beads``
- Backlog.md (``backlog/tasks/task-N - Title.md``): ``tether.board.interop.backlog``

An imported ticket keeps its source id in ``origin`` (``beads:bd-12``), a digest
of the source record in ``origin_hash`` and the source's other fields in
``origin_fields``, so importing the same file again changes nothing and an
export writes those fields back. The mapping is in docs/reference/board.md.
"""

from __future__ import annotations

from pathlib import Path

from tether.board.board import Board
from tether.board.errors import BoardError
from tether.board.interop.common import ExportResult, ImportResult

FORMATS = ("beads", "backlog")


def import_from(board: Board, fmt: str, path: Path) -> ImportResult:
    """Create or update tickets from a beads ``issues.jsonl`` or a Backlog.md folder."""
    if fmt == "beads":
        from tether.board.interop.beads import import_file

        return import_file(board, path)
    if fmt == "backlog":
        from tether.board.interop.backlog import import_folder

        return import_folder(board, path)
    raise BoardError(f"unknown format {fmt!r}; use one of: {', '.join(FORMATS)}.")


def export_to(board: Board, fmt: str, path: Path) -> ExportResult:
    """Write the board's tickets into a beads ``issues.jsonl`` or a Backlog.md folder."""
    if fmt == "beads":
        from tether.board.interop.beads import export_file

        return export_file(board, path)
    if fmt == "backlog":
        from tether.board.interop.backlog import export_folder

        return export_folder(board, path)
    raise BoardError(f"unknown format {fmt!r}; use one of: {', '.join(FORMATS)}.")


__all__ = ["FORMATS", "ExportResult", "ImportResult", "export_to", "import_from"]
