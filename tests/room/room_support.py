"""Helpers for the room tests: the tether command, a scripted room profile, the shared wiki."""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Iterator
from contextlib import AbstractContextManager, closing, contextmanager
from pathlib import Path

from tests.across_workers import held
from tests.wikigen import SEED, GenWiki, generate, plan

from tether.room.brief import Brief, make_brief
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


def _add_vectors(src: Path, dst: Path) -> None:
    """The page vectors ``src`` holds and ``dst`` lacks, added to ``dst`` (two indexes of
    one wiki: a page's vector by a model is the same in both)."""
    with closing(sqlite3.connect(dst, isolation_level=None)) as conn:
        conn.execute("PRAGMA busy_timeout = 10000")
        conn.execute("ATTACH DATABASE ? AS other", (str(src),))
        conn.execute("INSERT OR IGNORE INTO vectors SELECT * FROM other.vectors")
        conn.execute("DETACH DATABASE other")


def _files(root: Path) -> dict[str, tuple[int, int]]:
    return {
        str(p.relative_to(root)): (p.stat().st_mtime_ns, p.stat().st_size)
        for p in root.rglob("*")
        if p.is_file()
    }


class SharedWiki:
    """The generated wiki, and one index of it that the tests' briefs fill, both shared
    by the run's pytest-xdist workers (``tests.across_workers``).

    The first worker generates the wiki and indexes it; the others find both. A page's
    vectors, embedded by any worker's brief, serve every later brief of every worker.
    """

    def __init__(self, folder: Path, pages: int = 300) -> None:
        self.folder = folder
        with held(folder):
            root, done = folder / "kb", folder / "generated"
            if done.exists():
                self.gen = GenWiki(root, *plan(pages, SEED))
            else:
                self.gen = generate(root, pages=pages, seed=SEED)
                done.touch()
            self.shared = self._index_path(folder / "home")
            with Index.open(Wiki.open(root), folder / "home") as index:
                index.update()
        self._files = _files(root)

    def _index_path(self, home: Path) -> Path:
        return default_index_path(home, Wiki.open(self.gen.root))

    def warm(self, home: Path) -> None:
        """Put a copy of the shared index where ``home``'s tether looks for it."""
        with held(self.folder):
            _copy_db(self.shared, self._index_path(home))

    def keep(self, home: Path) -> None:
        """Add to the shared index the vectors ``home``'s briefs embedded."""
        index = self._index_path(home)
        if index.exists():
            with held(self.folder):
                _add_vectors(index, self.shared)
        assert _files(self.gen.root) == self._files, "a test wrote to the shared wiki"

    @contextmanager
    def index(self) -> Iterator[Index]:
        """The shared index itself, open: brief with ``brief`` (it holds the lock)."""
        with Index.open(Wiki.open(self.gen.root), self.folder / "home") as ix:
            yield ix
        assert _files(self.gen.root) == self._files, "a test wrote to the shared wiki"

    def lock(self) -> AbstractContextManager[None]:
        """Held by one worker at a time: whatever may embed pages of the shared index
        (a brief) runs under it, so that no two workers embed the same page at once."""
        return held(self.folder)

    def brief(self, index: Index, question: str, budget: int) -> Brief:
        """``make_brief`` on the shared ``index``, under the lock."""
        with self.lock():
            return make_brief(index, question, budget)
