"""A room's folder, its fixed page list and the page reads counted against B.

``$TETHER_HOME/rooms/<room id>/`` holds ``room.json`` (question, B, the page
list fixed by the brief, the cut pages), ``reads.jsonl`` (one line per read
attempt, appended under an exclusive lock, so concurrent reads count exactly),
``conclusion.md`` and ``check.json``. Inside a room ``TETHER_ROOM_DIR`` points
at the folder; ``tether wiki read`` then reads through ``read_page`` only.

A read of a page on the list counts once (reading it again is free). A read of
any other page is refused: "budget reached" once B pages were read, else "not
on this room's list". A name that is no page of the brief (``../../etc/passwd``)
is refused as "not a page" and never counts as a page the budget kept out. A
page on the list whose file is gone is recorded as missing. Tool calls other
than these reads that the gate refused inside the room (``cat`` on a page, a
grep over the wiki) are logged in the same file as ``refused-tool``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from tether.core.errors import PathEscapeError, TetherError, UsageError
from tether.core.exit_codes import ExitCode
from tether.core.project import ENV_ROOM_DIR
from tether.core.session_stamp import stamp, with_stamp
from tether.fs import atomic_write_json, atomic_write_text, flocked, resolve_inside

# The gate refuses other tool calls inside a room and logs them here (REFUSED_TOOL).
from tether.gate.roomrule import (
    CONCLUSION_FILE,
    READS_FILE,
    REFUSED_TOOL,
    read_line,
)
from tether.room.locks import ROOMS_DIR
from tether.wiki.layout import clean_page_name, page_path_forms
from tether.wiki.links import Resolver

ROOM_FILE = "room.json"
SESSION_KEY = "session"  # in room.json: the opener's session (None: unknown)
ROOM_AGENT = "tether-room"
CHECK_FILE = "check.json"

READ = "read"
REREAD = "reread"
REFUSED_BUDGET = "refused-budget"
REFUSED_LIST = "refused-list"
REFUSED_NOT_PAGE = "refused-not-a-page"
MISSING = "missing"


class RoomRefusedError(TetherError):
    """A room action that the room's rules do not allow (nesting, a second room, a read)."""

    exit_code = ExitCode.GATE_REFUSED


@dataclass(frozen=True)
class ListedPage:
    """A page of ``room.json``'s list (or cut), by what the room knows it."""

    id: str
    title: str
    page_path: str  # relative to the page folder
    aliases: tuple[str, ...] = ()
    stale: bool = False

    @classmethod
    def parse(cls, entry: Mapping[str, Any]) -> ListedPage:
        """One entry of ``room.json``'s ``pages`` or ``cut`` as the brief wrote it."""
        return cls(
            str(entry["id"]),
            str(entry["title"]),
            str(entry["page_path"]),
            tuple(str(a) for a in entry.get("aliases", ())),
            bool(entry.get("stale")),
        )


@dataclass(frozen=True)
class ReadLine:
    """One line of ``reads.jsonl``: a read attempt or a refused tool call."""

    asked: str
    outcome: str
    page_id: str | None
    page_path: str | None

    @classmethod
    def parse(cls, line: str) -> ReadLine:
        data = json.loads(line)
        return cls(data["asked"], data["outcome"], data.get("page_id"), data.get("page_path"))


@dataclass(frozen=True)
class ReadSummary:
    """What a room read, refused and left unread, from its read log."""

    room: str
    budget: int
    read: list[str]
    refused_budget: list[str]
    refused_list: list[str]
    refused_not_pages: list[str]
    refused_tools: list[str]
    missing: list[str]
    unread_on_list: list[str]

    @property
    def used(self) -> int:
        return len(self.read)

    @property
    def budget_hit(self) -> bool:
        return bool(self.refused_budget)

    def as_dict(self) -> dict[str, Any]:
        return {
            "room": self.room,
            "budget": self.budget,
            "read": self.read,
            "used": self.used,
            "refused_budget": self.refused_budget,
            "refused_list": self.refused_list,
            "refused_not_pages": self.refused_not_pages,
            "refused_tools": self.refused_tools,
            "missing": self.missing,
            "unread_on_list": self.unread_on_list,
            "budget_hit": self.budget_hit,
        }


def _unique(values: Iterable[str | None]) -> list[str]:
    return [v for v in dict.fromkeys(values) if v is not None]


@dataclass(frozen=True)
class ReadResult:
    outcome: str
    page_id: str | None
    text: str | None
    used: int
    budget: int


def _path_key(path: str) -> str:
    low = path.lower()
    return low[:-3] if low.endswith(".md") else low


_FILE_SUFFIX = re.compile(r"\.[A-Za-z0-9]{1,5}$")


def looks_like_page_name(name: str) -> bool:
    """Could ``name`` name a wiki page? Not a path out of the wiki nor another kind of file."""
    text = name.strip().strip("`").strip()
    if not text or text.startswith(("/", "~", "\\")) or "\\" in text:
        return False
    if ".." in PurePosixPath(text).parts:
        return False
    suffix = _FILE_SUFFIX.search(text)
    return suffix is None or suffix.group().lower() == ".md"


def rooms_dir(home: Path) -> Path:
    return Path(home) / ROOMS_DIR


class Room:
    """An opened room's folder."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        try:
            self.data: dict[str, Any] = json.loads((folder / ROOM_FILE).read_text("utf-8"))
        except FileNotFoundError:
            raise UsageError(f"{folder} is not a room folder (no {ROOM_FILE})") from None
        self._resolver: Resolver | None = None

    @classmethod
    def create(cls, home: Path, room_id: str, data: dict[str, Any]) -> Room:
        folder = rooms_dir(home) / room_id
        folder.mkdir(parents=True, exist_ok=False)
        atomic_write_json(folder / ROOM_FILE, data)
        (folder / READS_FILE).touch()
        return cls(folder)

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> Room | None:
        environ = os.environ if env is None else env
        folder = environ.get(ENV_ROOM_DIR)
        return cls(Path(folder)) if folder else None

    @classmethod
    def find(cls, home: Path, room_id: str | None) -> Room:
        """A room by id, or the newest one."""
        base = rooms_dir(home)
        if room_id is not None:
            return cls(resolve_inside(base, room_id))
        rooms = sorted(p for p in base.glob("*/" + ROOM_FILE)) if base.is_dir() else []
        if not rooms:
            raise UsageError("no room has been opened yet; give --room ID")
        newest = max(rooms, key=lambda p: (p.stat().st_mtime_ns, str(p)))
        return cls(newest.parent)

    @property
    def id(self) -> str:
        return str(self.data["id"])

    def stamp_line(self, env: Mapping[str, str] | None = None) -> str:
        """The stamp that ends the conclusion (docs/explanation/the-session-stamp.md):
        the session that opened the room.

        The room is a subagent of its opener, so inside it the opener's session
        (recorded in ``room.json``, ``unknown`` when it had none) is the one named,
        not the room run's own; a room recorded without one stamps with ``env``."""
        environ = os.environ if env is None else env
        if SESSION_KEY not in self.data:
            return stamp(environ, ROOM_AGENT)
        return stamp({}, ROOM_AGENT, explicit=self.data[SESSION_KEY])

    def write_conclusion(self, text: str, env: Mapping[str, str] | None = None) -> str:
        """Write ``conclusion.md`` ending with the stamp; the text as written."""
        stamped = with_stamp(text, self.stamp_line(env))
        atomic_write_text(self.folder / CONCLUSION_FILE, stamped)
        return stamped

    @property
    def budget(self) -> int:
        return int(self.data["budget"])

    @property
    def pages(self) -> list[ListedPage]:
        return [ListedPage.parse(p) for p in self.data["pages"]]

    @property
    def cut(self) -> list[ListedPage]:
        return [ListedPage.parse(p) for p in self.data.get("cut", [])]

    @property
    def wiki_pages_dir(self) -> Path:
        return Path(self.data["pages_dir"])

    def _all_known(self) -> list[ListedPage]:
        return self.pages + self.cut

    def resolver(self) -> Resolver:
        if self._resolver is None:
            known = self._all_known()
            self._resolver = Resolver(
                [p.page_path for p in known],
                [(p.page_path, a) for p in known for a in [p.id, p.title, *p.aliases]],
            )
        return self._resolver

    @property
    def prefix(self) -> str:
        """The page folder relative to the wiki root (``"wiki/"`` or ``""``)."""
        try:
            rel = self.wiki_pages_dir.relative_to(Path(self.data.get("wiki_root", "")))
        except ValueError:
            return ""
        return "" if rel == Path() else f"{rel.as_posix()}/"

    def identify(self, name: str) -> ListedPage | None:
        """The list (or cut) entry ``name`` means, read as ``Index.find`` reads a name:
        its id, its path relative to the page folder or the wiki root (``.md``
        optional), a file name, alias or link text, or its title."""
        text = clean_page_name(name).split("|", 1)[0].split("#", 1)[0].strip()
        if not text:
            return None
        known = self._all_known()
        low = text.lower()
        for entry in known:
            if entry.id.lower() == low:
                return entry
        forms = page_path_forms(text, self.prefix)
        for form in forms:
            for entry in known:
                if _path_key(entry.page_path) == _path_key(form):
                    return entry
        for form in forms or [text]:
            hit = self.resolver().resolve(form)
            if hit is not None:
                return next(p for p in known if p.page_path == hit.path)
        return None

    def on_list(self, entry: ListedPage) -> bool:
        return any(p.page_path == entry.page_path for p in self.pages)

    @contextmanager
    def _locked_reads(self) -> Iterator[Any]:
        with (self.folder / READS_FILE).open("a+", encoding="utf-8") as handle, flocked(handle):
            yield handle

    def reads(self) -> list[ReadLine]:
        path = self.folder / READS_FILE
        if not path.exists():
            return []
        return [
            ReadLine.parse(line) for line in path.read_text("utf-8").splitlines() if line.strip()
        ]

    def read_page(self, name: str) -> ReadResult:
        """Read ``name`` through the room's budget; the attempt is recorded whatever happens."""
        with self._locked_reads() as handle:
            handle.seek(0)
            done = [ReadLine.parse(x) for x in handle.read().splitlines() if x.strip()]
            read_paths = {r.page_path for r in done if r.outcome == READ}
            used = len(read_paths)
            entry = self.identify(name)
            outcome: str
            text: str | None = None
            if entry is not None and self.on_list(entry):
                if entry.page_path in read_paths:
                    outcome = REREAD
                else:
                    text = self._load(entry)
                    outcome = READ if text is not None else MISSING
                    if text is not None:
                        used += 1
                if outcome == REREAD:
                    text = self._load(entry)
            elif entry is None and not looks_like_page_name(name):
                outcome = REFUSED_NOT_PAGE
            elif used >= self.budget:
                outcome = REFUSED_BUDGET
            else:
                outcome = REFUSED_LIST
            handle.write(
                read_line(
                    name,
                    outcome,
                    entry.id if entry else None,
                    entry.page_path if entry else None,
                )
            )
            handle.flush()
            os.fsync(handle.fileno())
        return ReadResult(outcome, entry.id if entry else None, text, used, self.budget)

    def _load(self, entry: ListedPage) -> str | None:
        try:
            file = resolve_inside(self.wiki_pages_dir, entry.page_path)
            return file.read_text("utf-8", "replace")
        except (OSError, PathEscapeError):
            return None

    def summary(self) -> ReadSummary:
        """What was read, refused and left unread, from the read log."""
        reads = self.reads()

        def of(outcome: str) -> list[ReadLine]:
            return [r for r in reads if r.outcome == outcome]

        read_ids = _unique(r.page_id for r in of(READ))
        return ReadSummary(
            room=self.id,
            budget=self.budget,
            read=read_ids,
            refused_budget=_unique(r.page_id for r in of(REFUSED_BUDGET) if r.page_id),
            refused_list=_unique(r.page_id or r.asked for r in of(REFUSED_LIST)),
            refused_not_pages=_unique(r.asked for r in of(REFUSED_NOT_PAGE)),
            refused_tools=[r.asked for r in of(REFUSED_TOOL)],
            missing=_unique(r.page_id for r in of(MISSING)),
            unread_on_list=[p.id for p in self.pages if p.id not in read_ids],
        )
