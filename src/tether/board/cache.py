"""Reading the whole board: a walk of the state folders and a parse cache.

Each file's parse (a ticket, "informal", or an error message) is kept in memory
keyed by its path, ``st_mtime_ns``, ``st_ctime_ns``, ``st_size`` and inode (a
file replaced by rename is a new inode even within one timestamp tick). A warm
load is one ``os.scandir`` per folder and one ``stat`` per file; only new or
changed files are read. When nothing changed at all the previous ``BoardView``
is returned. The cache lives in the process (shared by every ``Board`` on the
same root) and, when the board knows the tether home, also in a file there
(``tether.board.stored``), so that a new process reads only what changed since.
"""

from __future__ import annotations

import gc
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Final

from tether.board import stored
from tether.board.errors import TicketFormatError
from tether.board.states import REASONS, State
from tether.board.ticket import Ticket, ticket_from
from tether.board.view import BoardView

if TYPE_CHECKING:
    from tether.fswatch import FolderWatch

# Use inotify (Linux) to skip the stat walk when nothing changed; off = always walk.
USE_INOTIFY = True

INFORMAL: Final = "informal"
EMPTY: Final = (
    "an empty file: the loop does not guess what it is about; write that into it, delete "
    "it, or triage it by hand (`tether board triage NAME` takes its name as the title)."
)
# What a file parses to: a ticket, INFORMAL (an INBOX note), or an error message.
Parsed = Ticket | str
Entry = stored.Entry
_ROOT_FILES_IGNORED = frozenset({"README.md", "README"})
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC


def _child_maker(folder: Path) -> Callable[[str], Path]:
    """``folder / name`` for a plain file name, without re-parsing the folder's path.

    ``Path.iterdir`` builds its children with ``_make_child_relpath``; where that
    private helper is missing, the public join is used.
    """
    maker = getattr(folder, "_make_child_relpath", None)
    return maker if callable(maker) else folder.joinpath


def parse_file(
    path: Path,
    state: State,
    reason: str | None,
    size: int = 0,
    name: str | None = None,
    dir_fd: int | None = None,
) -> Parsed:
    """Read one file of a state folder (``name`` in ``dir_fd`` if given); never raises."""
    try:
        data = _read(str(path) if dir_fd is None else name or path.name, size, dir_fd)
    except OSError as exc:
        return f"cannot read: {exc.strerror or exc}"
    return parse_bytes(data, path, state, reason)


def _read(path: str, size: int, dir_fd: int | None = None) -> bytes:
    """The whole file: one read of its known size (plus one byte to notice growth).

    Asking for ``size + 1`` and getting ``size`` bytes means the end of the file;
    fewer (it shrank, or a short read) or more (it grew) means reading on to the end.
    """
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC, dir_fd=dir_fd)
    try:
        data = os.read(fd, size + 1)
        if len(data) == size:
            return data
        chunks = [data]
        while data:
            data = os.read(fd, 1 << 16)
            chunks.append(data)
        return b"".join(chunks)
    finally:
        os.close(fd)


def parse_bytes(data: bytes, path: Path, state: State, reason: str | None) -> Parsed:
    from tether.board import ticket_yaml

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if state is State.INBOX:
            return INFORMAL
        return f"not UTF-8 text (byte {exc.start}); save it as UTF-8."
    if state is State.INBOX and not text.strip():
        return EMPTY
    parts = ticket_yaml.split(text)
    if parts is None:
        if state is State.INBOX:
            return INFORMAL
        return (
            "no front matter (the file must start with a `---` line, the YAML keys, and "
            "another `---` line); put notes without front matter into INBOX/."
        )
    front_text, body = parts
    try:
        front = ticket_yaml.parse(front_text)
    except ticket_yaml.FrontMatterError as exc:
        return f"front matter is not valid YAML: {exc}"
    try:
        return ticket_from(path, state, reason, front, body)
    except TicketFormatError as exc:
        return exc.reason


class _Walked:
    """What one walk found so far: each file's entry by path, the parses by kind, the
    files outside the rules (``extra``), and whether anything changed."""

    def __init__(
        self, refused: Sequence[tuple[Path, str]], disk: stored.Walk, real_root: str
    ) -> None:
        self.disk = disk
        self.real_root = real_root
        self.seen: dict[str, Entry] = {}
        self.tickets: list[Ticket] = []
        self.informal: list[Path] = []
        self.malformed: list[tuple[Path, str]] = []
        # misplaced files and refused folders: not cached, found each time
        self.extra: list[tuple[Path, str]] = list(refused)
        self.changed = False
        self.nested = False


class ParseCache:
    """Parsed files of one board root, and the last view built from them.

    One load at a time per root: a server that reads the board from several
    threads (the dashboard) shares the cache safely.

    A parse is reused while the file's ``stat`` is unchanged, except a parse of
    a file that had changed just before it was read (``stored.settled``): an
    edit in the same timestamp tick could keep its ``stat``, so such a file is
    read again, unless a folder watch running since that read saw nothing.
    The watch starts at a process's second load (most processes read the board
    once; the first walk reads every file anyway).
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.watch: FolderWatch | None = None
        self.watch_failed = False
        self.watch_trusted = False  # the walk in progress ran under a complete watch
        self.trusted_view: BoardView | None = None  # a view that watch events keep current
        self.watched_since = False  # a complete watch has run since the last walk
        self.exact = False  # ... and it saw every change: unsettled parses may be reused
        self.walked = False
        self.entries: dict[str, Entry] = {}
        self.view: BoardView | None = None
        self.extra: list[tuple[Path, str]] = []
        self.store: Path | None = None  # the cache file between processes (None: none)
        self.stored: dict[str, stored.Record] | None = None  # what that file holds
        self.store_stale = False  # it is missing, torn or not ours: write it at the next walk

    def keep_in(self, path: Path | None) -> None:
        """Keep the parsed files also in ``path`` (``tether.board.stored``) between processes."""
        if path != self.store:
            self.store = path
            self.stored = None

    def load(
        self,
        root: Path,
        folders: Mapping[tuple[State, str | None], Path],
        refused: Sequence[tuple[Path, str]] = (),
    ) -> BoardView:
        with self.lock:
            quick = self._unchanged(root, folders, refused)
            if quick is not None:
                return quick
            # A walk makes thousands of objects that all live on: a collection in the
            # middle of it would look at them all and free nothing.
            collecting = gc.isenabled()
            gc.disable()
            try:
                return self._walk(root, folders, refused)
            finally:
                if collecting:
                    gc.enable()

    def _walk(
        self,
        root: Path,
        folders: Mapping[tuple[State, str | None], Path],
        refused: Sequence[tuple[Path, str]],
    ) -> BoardView:
        real_root = os.path.realpath(root)
        walked = _Walked(refused, self._disk(real_root, len(str(root)) + 1), real_root)
        for (state, reason), folder_path in folders.items():
            self._walk_folder(walked, state, reason, folder_path)
        _outside_folders(root, walked.extra)
        self._save(walked.disk, real_root)
        # Folders with sub-folders in them are not watched: walk those boards every time.
        trusted = self.watch_trusted and not walked.nested
        self.watched_since = trusted
        self.walked = True
        seen = walked.seen
        unchanged = not walked.changed and len(seen) == len(self.entries) and self.view is not None
        self.entries = seen
        if unchanged and walked.extra == self.extra:
            self.trusted_view = self.view if trusted else None
            return self.view  # type: ignore[return-value]
        self.extra = walked.extra
        view = _build(walked.tickets, walked.informal, walked.malformed + walked.extra)
        self.view = view
        self.trusted_view = view if trusted else None
        return view

    def _walk_folder(
        self, walked: _Walked, state: State, reason: str | None, folder_path: Path
    ) -> None:
        """One state folder: each file's parse from memory, the cache file, or the file."""
        folder = str(folder_path) + "/"
        extra = walked.extra
        try:
            # Listing through a folder descriptor makes each stat and open a one-name
            # lookup (fstatat/openat) instead of a walk of the whole path.
            dir_fd = os.open(folder, _DIR_FLAGS)
        except (FileNotFoundError, NotADirectoryError):
            return
        except OSError as exc:
            extra.append((folder_path, f"cannot read this folder: {exc.strerror or exc}."))
            return
        try:
            scan = os.scandir(dir_fd)
        except OSError:
            os.close(dir_fd)
            return
        entries, seen, disk = self.entries, walked.seen, walked.disk
        exact = self.exact
        child = _child_maker(folder_path)
        inside = walked.real_root + os.sep
        with scan:
            for entry in scan:
                name = entry.name
                if name[0] == ".":
                    continue
                if entry.is_symlink():
                    target = os.path.realpath(folder + name)
                    if not target.startswith(inside):
                        extra.append((child(name), _escaping(target)))
                        continue
                if entry.is_dir():
                    walked.nested = True
                    _misplaced(folder_path / name, extra, _nested_message(state, reason))
                    continue
                path_text = folder + name
                try:
                    st = entry.stat()
                except OSError:  # gone since the listing (moved by another process)
                    continue
                hit = entries.get(path_text)
                if (
                    hit is None
                    or hit[0] != st.st_mtime_ns
                    or hit[1] != st.st_ctime_ns
                    or hit[2] != st.st_size
                    or hit[3] != st.st_ino
                    or not (hit[5] or exact)
                ):
                    file = child(name)
                    found = disk.find(path_text, st, file, state, reason)
                    if found is None:
                        parsed = parse_file(file, state, reason, st.st_size, name, dir_fd)
                        found = stored.entry(st, parsed, disk.read_at)
                        disk.parsed(path_text, st, found)
                    if hit is None or found[4] != hit[4]:
                        walked.changed = True
                    hit = found
                else:
                    disk.kept(path_text, st, hit)
                seen[path_text] = hit
                parsed = hit[4]
                if parsed.__class__ is Ticket:
                    walked.tickets.append(parsed)
                elif parsed is INFORMAL:
                    walked.informal.append(child(name))
                else:
                    walked.malformed.append((child(name), parsed))  # type: ignore[arg-type]
        os.close(dir_fd)

    def _disk(self, real_root: str, prefix: int) -> stored.Walk:
        """The cache file's side of this walk (the file is read at the process's first walk)."""
        if self.store is not None and self.stored is None:
            found = stored.read(self.store, real_root, stored.stamp())
            self.store_stale = found is None
            self.stored = {} if found is None else found
        old = self.stored if self.store is not None else None
        return stored.Walk(old, prefix, time.time_ns(), INFORMAL)

    def _save(self, disk: stored.Walk, real_root: str) -> None:
        """Write the cache file when what it should hold differs from what it holds."""
        if self.store is None or not (disk.differs() or (self.store_stale and disk.records)):
            return
        if stored.write(self.store, real_root, stored.stamp(), disk.records):
            self.stored = disk.records
            self.store_stale = False
        else:  # a read-only home (the sandbox): stop trying in this process
            self.store = None
            self.stored = None

    def close(self) -> None:
        """Let go of the folder watch (the parsed files go with the object)."""
        if self.watch is not None:
            self.watch.close()
            self.watch = None
        self.trusted_view = None

    def _unchanged(
        self,
        root: Path,
        folders: Mapping[tuple[State, str | None], Path],
        refused: Sequence[tuple[Path, str]],
    ) -> BoardView | None:
        """The last view when the folder watch saw no change, else ``None`` (walk the board).

        Before a walk, every folder is (re-)watched, so that a change during the
        walk is pending for the next load.
        """
        self.watch_trusted = False
        self.exact = False
        if not USE_INOTIFY or self.watch_failed or not self.walked:
            return None
        watch = self.watch
        since = self.watched_since
        if watch is None or not watch.usable:
            self.trusted_view = None  # a new watch knows nothing of earlier changes
            since = False
            from tether.fswatch import FolderWatch

            watch = self.watch = FolderWatch.start(str(root))
            if watch is None:
                return None
        drained = watch.drain()
        if drained.changed:  # rebuild the view; files named are read again whatever stat says
            self.view = None
            for path in drained.names:
                self.entries.pop(path, None)
        self.exact = since and drained.exact
        if not drained.changed and self.trusted_view is not None and self.trusted_view is self.view:
            extra = list(refused)
            _outside_folders(root, extra)
            if extra == self.extra:
                return self.view
        ok = watch.add(str(root))
        for state in REASONS:
            ok = watch.add(str(root / state.value)) and ok
        for folder in folders.values():
            ok = watch.add(str(folder)) and ok
        if not ok:  # e.g. the kernel's watch limit: fall back to the stat walk for good
            watch.close()
            self.watch = None
            self.watch_failed = True
        self.watch_trusted = ok
        return None


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


def _escaping(target: str) -> str:
    return (
        f"a symbolic link to {target}, outside the board: tether does not read it; "
        f"put the file itself on the board, or remove the link."
    )


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
    except OSError:  # no board yet (or not a folder): nothing is misplaced
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
        try:
            subs = list(os.scandir(path))
        except OSError:
            continue
        for sub in subs:
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


# The process-wide caches, most recently used last; a process rarely has more than
# one board, so the oldest are dropped (and their folder watches closed) beyond a few.
_CACHES: dict[str, ParseCache] = {}
_MAX_BOARDS = 8
_CACHES_LOCK = threading.Lock()


def cache_for(root: Path) -> ParseCache:
    """The process-wide cache of a board root."""
    key = str(root)
    with _CACHES_LOCK:
        cache = _CACHES.pop(key, None)
        if cache is None:
            cache = ParseCache()
            while len(_CACHES) >= _MAX_BOARDS:
                _CACHES.pop(next(iter(_CACHES))).close()
        _CACHES[key] = cache
        return cache
