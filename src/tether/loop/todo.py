"""Open ``- [ ]`` items in the configured TODO files.

An item that mentions an approval or a decision (``todo_hold_words``) waits for
a person and is not autonomous work. Parsed files are cached by modification
time and size, so a tick over unchanged files does not parse them again.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tether.core.session_stamp import is_stamp
from tether.fs import atomic_write_text

OPEN_ITEM = re.compile(r"^(?P<indent>\s*)(?P<bullet>[-*+]|\d+[.)])\s+\[ \]\s+(?P<text>\S.*?)\s*$")
PREFIX = "todo:"


@dataclass(frozen=True)
class TodoItem:
    file: str  # as configured (relative to the project root)
    line: int  # 1-based
    text: str
    held: bool  # mentions an approval/decision: waits for a person
    occurrence: int = 0  # how many items with the same text come before it in the file

    @property
    def key(self) -> str:
        """The run unit: ``todo:<file>#<hash of the text>`` (``-N`` for a repeated text)."""
        return unit_key(self.file, self.text, self.occurrence)

    def as_dict(self) -> dict[str, object]:
        return {
            "file": self.file,
            "line": self.line,
            "text": self.text,
            "unit": self.key,
            "held": self.held,
        }


# path -> ((mtime_ns, size, hold words), the file's open items)
_cache: dict[Path, tuple[tuple[int, int, tuple[str, ...]], tuple[TodoItem, ...]]] = {}


def hold_pattern(words: Sequence[str]) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(w) for w in words if w)
    if not alternatives:
        return re.compile(r"(?!x)x")  # matches nothing
    return re.compile(rf"\b(?:{alternatives})", re.IGNORECASE)


def unit_key(file: str, text: str, occurrence: int) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:10]
    return f"{PREFIX}{file}#{digest}" + (f"-{occurrence}" if occurrence else "")


def _file_items(root: Path, name: str, words: tuple[str, ...]) -> tuple[TodoItem, ...] | None:
    path = root / name
    try:
        info = path.stat()
    except OSError:
        return None
    stamp = (info.st_mtime_ns, info.st_size, words)
    cached = _cache.get(path)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    hold = hold_pattern(words)
    items: list[TodoItem] = []
    occurrences: dict[str, int] = {}
    if "[ ]" in text:
        for number, line in enumerate(text.splitlines(), start=1):
            if "[ ]" not in line:
                continue
            match = OPEN_ITEM.match(line)
            if match is None:
                continue
            item_text = match["text"]
            count = occurrences.get(item_text, 0)
            occurrences[item_text] = count + 1
            items.append(
                TodoItem(name, number, item_text, hold.search(item_text) is not None, count)
            )
    result = tuple(items)
    _cache[path] = (stamp, result)
    return result


def open_items(
    root: Path, files: Sequence[str], hold_words: Sequence[str]
) -> tuple[list[TodoItem], list[str]]:
    """Every open item of every file, in file and line order; also the files not found."""
    words = tuple(hold_words)
    items: list[TodoItem] = []
    missing: list[str] = []
    for name in files:
        found = _file_items(root, name, words)
        if found is None:
            missing.append(name)
        else:
            items.extend(found)
    return items, missing


def mark_done(root: Path, item: TodoItem, note: str, stamp: str) -> bool:
    """Tick the item's box (``- [x] text — note``) and put the session ``stamp``
    on the line under it, inside the item; False if the item is no longer there."""
    return _rewrite(root, item, note, stamp, tick=True)


def hold(root: Path, item: TodoItem, note: str, stamp: str) -> bool:
    """Leave the box open with a note (``- [ ] text — note``) and the session ``stamp``
    under it, e.g. that it waits for an approval (a hold word: the item then waits for a
    person); False if it is gone."""
    return _rewrite(root, item, note, stamp, tick=False)


def _rewrite(root: Path, item: TodoItem, note: str, stamp: str, *, tick: bool) -> bool:
    path = root / item.file
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return False
    lines = text.splitlines(keepends=True)
    seen = 0
    for index, line in enumerate(lines):
        match = OPEN_ITEM.match(line.rstrip("\r\n"))
        if not match or match["text"] != item.text:
            continue
        if seen < item.occurrence:
            seen += 1
            continue
        ending = line[len(line.rstrip("\r\n")) :] or "\n"
        body = line.rstrip("\r\n")
        if tick:
            body = body.replace("[ ]", "[x]", 1)
        # the stamp is a continuation line of the item: indented to its text
        indent = " " * (len(match["indent"]) + len(match["bullet"]) + 1)
        after = index + 1
        if after < len(lines) and is_stamp(lines[after]):
            del lines[after]  # a held item ticked later keeps one stamp, the newest
        lines[index : index + 1] = [f"{body} — {note}{ending}", f"{indent}{stamp}{ending}"]
        atomic_write_text(path, "".join(lines))
        return True
    return False
