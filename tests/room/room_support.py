"""Helpers for the room tests: the tether command, a scripted room profile, the shared wiki."""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path

from tests.wikigen import generate

from tether.wiki.index import Index, default_index_path
from tether.wiki.layout import Wiki

TETHER = str(Path(sys.executable).parent / "tether")


def room_question(word: str) -> str:
    """A question about a generated page that finds it and more pages by their words.

    "What is X?" alone finds only X's page by its words: read directly, no room.
    """
    return f"What is {word} and what does it depend on?"


def write_profile(project: Path, commands: list[str] | None, *extra: str) -> None:
    """A tether.toml whose default profile is the scripted agent running ``commands``."""
    import json

    args = ["--format", "claude-code", *extra]
    if commands is not None:
        script = project / "room-commands.txt"
        script.write_text("\n".join(commands) + "\n", encoding="utf-8")
        args += ["--commands-file", str(script)]
    (project / "tether.toml").write_text(
        'kill_grace_seconds = 0.5\n\n[profiles.room]\nharness = "scripted"\n'
        f"args = {json.dumps(args)}\ndefault = true\n",
        encoding="utf-8",
    )


def _copy_db(src: Path, dst: Path) -> None:
    """A consistent copy of an SQLite file (its write-ahead log included)."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    with closing(sqlite3.connect(src)) as a, closing(sqlite3.connect(dst)) as b:
        a.backup(b)


def _files(root: Path) -> dict[str, tuple[int, int]]:
    return {
        str(p.relative_to(root)): (p.stat().st_mtime_ns, p.stat().st_size)
        for p in root.rglob("*")
        if p.is_file()
    }


class SharedWiki:
    """The generated wiki, and the index that the tests' briefs fill, one per process."""

    def __init__(self, base: Path) -> None:
        self.gen = generate(base / "kb", pages=300)
        self.template = base / "index.sqlite"
        self._files = _files(self.gen.root)

    def _index_path(self, home: Path) -> Path:
        return default_index_path(home, Wiki.open(self.gen.root))

    def warm(self, home: Path) -> None:
        """Put a copy of the shared index where ``home``'s tether looks for it."""
        if self.template.exists():
            _copy_db(self.template, self._index_path(home))

    def keep(self, home: Path) -> None:
        """Keep what ``home``'s index holds now (the vectors its briefs embedded)."""
        index = self._index_path(home)
        if index.exists():
            _copy_db(index, self.template)
        assert _files(self.gen.root) == self._files, "a test wrote to the shared wiki"

    @contextmanager
    def index(self, home: Path) -> Iterator[Index]:
        """An index of the wiki in ``home``, warmed before and kept after."""
        self.warm(home)
        with Index.open(Wiki.open(self.gen.root), home) as ix:
            ix.update()
            yield ix
        self.keep(home)
