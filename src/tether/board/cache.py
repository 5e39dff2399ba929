"""Reading the whole board: a walk of the state folders and a parse cache.

Each file's parse (a ticket, "informal", or an error message) is kept in memory
keyed by its path, ``st_mtime_ns``, ``st_size`` and inode (a file replaced by
rename is a new inode even within one timestamp tick). A warm load is one
``os.scandir`` per folder and one ``stat`` per file; only new or changed files
are read. When nothing changed at all the previous ``BoardView`` is returned.
The cache lives in the process (shared by every ``Board`` on the same root).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final

from tether.board import frontmatter
from tether.board.errors import TicketFormatError
from tether.board.states import REASONS, State
from tether.board.ticket import Ticket, ticket_from
from tether.board.view import BoardView

INFORMAL: Final = "informal"
# What a file parses to: a ticket, INFORMAL (an INBOX note), or an error message.
Parsed = Ticket | str
_ROOT_FILES_IGNORED = frozenset({"README.md", "README"})


def parse_file(path: Path, state: State, reason: str | None) -> Parsed:
    """Read one file of a state folder; never raises for bad content."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        return f"cannot read: {exc.strerror or exc}"
    return parse_bytes(data, path, state, reason)


def parse_bytes(data: bytes, path: Path, state: State, reason: str | None) -> Parsed:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if state is State.INBOX:
            return INFORMAL
        return f"not UTF-8 text (byte {exc.start}); save it as UTF-8."
    parts = frontmatter.split(text)
    if parts is None:
        if state is State.INBOX:
            return INFORMAL
        return (
            "no front matter (the file must start with a `---` line, the YAML keys, and "
            "another `---` line); put notes without front matter into INBOX/."
        )
    front_text, body = parts
    try:
        front = frontmatter.parse(front_text)
    except frontmatter.FrontMatterError as exc:
        return f"front matter is not valid YAML: {exc}"
    try:
        return ticket_from(path, state, reason, front, body)
    except TicketFormatError as exc:
        return exc.reason


class ParseCache:
    """Parsed files of one board root, and the last view built from them."""

    def __init__(self) -> None:
        self.entries: dict[str, tuple[int, int, int, Parsed]] = {}
        self.view: BoardView | None = None
        self.extra: list[tuple[Path, str]] = []

    def load(
        self,
        root: Path,
        folders: Mapping[tuple[State, str | None], Path],
        refused: Sequence[tuple[Path, str]] = (),
    ) -> BoardView:
        entries = self.entries
        seen: dict[str, tuple[int, int, int, Parsed]] = {}
        tickets: list[Ticket] = []
        informal: list[Path] = []
        malformed: list[tuple[Path, str]] = []
        # misplaced files and refused folders: not cached, found each time
        extra: list[tuple[Path, str]] = list(refused)
        changed = False
        for (state, reason), folder_path in folders.items():
            folder = str(folder_path)
            try:
                scan = os.scandir(folder)
            except FileNotFoundError:
                continue
            with scan:
                for entry in scan:
                    name = entry.name
                    if name[0] == ".":
                        continue
                    if entry.is_dir():
                        _misplaced(Path(entry.path), extra, _nested_message(state, reason))
                        continue
                    path_text = entry.path
                    try:
                        st = entry.stat()
                    except OSError:  # gone since the listing (moved by another process)
                        continue
                    hit = entries.get(path_text)
                    if (
                        hit is not None
                        and hit[0] == st.st_mtime_ns
                        and hit[1] == st.st_size
                        and hit[2] == st.st_ino
                    ):
                        parsed = hit[3]
                        seen[path_text] = hit
                    else:
                        parsed = parse_file(Path(path_text), state, reason)
                        seen[path_text] = (st.st_mtime_ns, st.st_size, st.st_ino, parsed)
                        changed = True
                    if parsed.__class__ is Ticket:
                        tickets.append(parsed)
                    elif parsed is INFORMAL:
                        informal.append(Path(path_text))
                    else:
                        malformed.append((Path(path_text), parsed))  # type: ignore[arg-type]
        _outside_folders(root, extra)
        if (
            not changed
            and len(seen) == len(entries)
            and self.view is not None
            and extra == self.extra
        ):
            return self.view
        self.entries = seen
        self.extra = extra
        view = _build(tickets, informal, malformed + extra)
        self.view = view
        return view


def _build(
    tickets: list[Ticket], informal: list[Path], malformed: list[tuple[Path, str]]
) -> BoardView:
    """The view; a second file with an id already seen is reported, not used."""
    first: dict[str, Path] = {}
    unique: list[Ticket] = []
    for ticket in tickets:
        other = first.get(ticket.id)
        if other is None:
            first[ticket.id] = ticket.path
            unique.append(ticket)
        else:
            malformed.append(
                (
                    ticket.path,
                    f"duplicate id {ticket.id}: also in {other}; give one of them a new id.",
                )
            )
    malformed.sort(key=lambda item: str(item[0]))
    return BoardView(tuple(unique), tuple(sorted(informal)), tuple(malformed))


def _nested_message(state: State, reason: str | None) -> str:
    if state in REASONS and reason is None:
        return (
            f"not in a reason folder of {state.value}; move it into one of "
            f"{', '.join(f'{state.value}/{r}' for r in REASONS[state])}."
        )
    where = f"{state.value}/{reason}" if reason else state.value
    return f"in a sub-folder of {where}; tickets live directly in the state folder."


def _outside_folders(root: Path, malformed: list[tuple[Path, str]]) -> None:
    """Files the walk of the state folders did not reach: misplaced, reported."""
    try:
        top = list(os.scandir(root))
    except FileNotFoundError:
        return
    for entry in top:
        name = entry.name
        if name[0] == ".":
            continue
        path = Path(entry.path)
        if not entry.is_dir():
            if name not in _ROOT_FILES_IGNORED:
                malformed.append((path, _OUTSIDE))
            continue
        reasons = REASONS.get(State(name)) if name in State.__members__ else None
        if name not in State.__members__:
            _misplaced(path, malformed, _OUTSIDE)
            continue
        if reasons is None:
            continue
        for sub in os.scandir(path):
            if sub.name[0] == ".":
                continue
            if not sub.is_dir():
                malformed.append((Path(sub.path), _nested_message(State(name), None)))
            elif sub.name not in reasons:
                _misplaced(
                    Path(sub.path),
                    malformed,
                    f"{sub.name!r} is not a reason of {name}; move the file into one of "
                    f"{', '.join(f'{name}/{r}' for r in reasons)}.",
                )


_OUTSIDE = "not in a state folder; move it into INBOX/ (or another state folder)."


def _misplaced(folder: Path, malformed: list[tuple[Path, str]], message: str) -> None:
    if not folder.is_dir():
        malformed.append((folder, message))
        return
    for current, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        malformed.extend(
            (Path(current, name), message) for name in files if not name.startswith(".")
        )


_CACHES: dict[str, ParseCache] = {}


def cache_for(root: Path) -> ParseCache:
    """The process-wide cache of a board root."""
    key = str(root)
    cache = _CACHES.get(key)
    if cache is None:
        cache = _CACHES[key] = ParseCache()
    return cache
