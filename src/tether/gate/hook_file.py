"""One hook configuration file: reading it, the change to it, writing it.

A change is computed first (so ``--dry-run`` can show the diff) and written
atomically: temp file, fsync, rename. Stdlib only, like the rest of the gate.
``difflib`` is imported only to show a diff (``--dry-run``): every run writes its
hooks through this module.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from typing import Any


class InstallError(Exception):
    """A hook configuration cannot be read or written as asked."""


class Change:
    """One file before and after (``None``: the file does not exist)."""

    __slots__ = ("after", "before", "path")

    def __init__(self, path: str, before: str | None, after: str | None) -> None:
        self.path = path
        self.before = before
        self.after = after

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def diff(self) -> str:
        import difflib

        before = [] if self.before is None else self.before.splitlines(keepends=True)
        after = [] if self.after is None else self.after.splitlines(keepends=True)
        return "".join(
            difflib.unified_diff(
                before,
                after,
                fromfile=self.path if self.before is not None else "/dev/null",
                tofile=self.path if self.after is not None else "/dev/null",
            )
        )


def read_text(path: str) -> str | None:
    """The file's text, ``None`` when it does not exist."""
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise InstallError(f"cannot read {path}: {exc}") from exc


def load_json_object(path: str, text: str | None) -> dict[str, Any]:
    """The JSON object in ``text`` (empty when there is none); anything else is refused."""
    if text is None or not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise InstallError(
            f"{path} is not valid JSON ({exc}); fix or move it, then install again"
        ) from exc
    if not isinstance(data, dict):
        raise InstallError(f"{path} holds a JSON {type(data).__name__}, not an object")
    return data


def dump_json(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def apply(change: Change) -> None:
    """Write (atomically: temp file, fsync, rename) or remove the file."""
    if not change.changed:
        return
    if change.after is None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(change.path)
        return
    directory = os.path.dirname(change.path)
    os.makedirs(directory, exist_ok=True)
    mode = 0o644
    with contextlib.suppress(FileNotFoundError):
        mode = os.stat(change.path).st_mode & 0o777
    fd, tmp = tempfile.mkstemp(prefix=".tether-", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(change.after)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, change.path)
        dir_fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
