"""``Board``: the ticket folder as a library (load, get, add, move, update, triage)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tether.board.cache import EMPTY, INFORMAL, cache_for, parse_file
from tether.board.errors import BoardError, TicketFormatError, TicketNotFoundError
from tether.board.folders import (
    ensure_folders,
    folder_path,
    locked,
    rename_into,
    rewrite,
)
from tether.board.states import (
    ALL_STATE_KEYS,
    PRIORITIES,
    STATE_KEYS,
    State,
    all_folders,
    check_reason,
    folder_of,
    is_ticket_id,
)
from tether.board.stored import store_path
from tether.board.ticket import Ticket, ordered, ticket_from
from tether.board.view import BoardView
from tether.clock import Clock, SystemClock
from tether.core.errors import PathEscapeError
from tether.fs import create_exclusive, resolve_inside

# Keys only the board sets; `front` arguments may not change them.
_FIXED_KEYS = ("id", "created")


@dataclass(frozen=True)
class NewTicket:
    """What a new ticket says; the board gives it its id and its creation time."""

    title: str
    priority: str = "P2"
    body: str = ""
    state: State = State.INBOX
    reason: str | None = None  # the state's reason folder (BLOCKED/lock, USER/approval, ...)
    front: Mapping[str, Any] | None = None  # more front matter (never ``id`` or ``created``)


class Board:
    """A folder of tickets (``root``, e.g. ``<project>/tickets``).

    ``project_root`` is what ``marker`` paths are relative to (default: the
    parent of ``root``). Reads need no lock; every change holds the board's lock
    (``folders.lock_path``: under ``.git/`` in a git work tree, else ``<root>/.lock``).
    ``home``: the tether home; when it exists, the parsed files are kept there too
    (``tether.board.stored``), so that a new process reads only what changed.
    """

    def __init__(
        self,
        root: Path,
        project_root: Path | None = None,
        *,
        clock: Clock | None = None,
        home: Path | None = None,
    ) -> None:
        self.root = Path(root).absolute()
        self.project_root = Path(project_root).absolute() if project_root else self.root.parent
        self.clock: Clock = clock or SystemClock()
        self._cache = cache_for(self.root)
        if home is not None and Path(home).is_dir():
            real = os.path.realpath(self.root)
            self._cache.keep_in(store_path(Path(home).absolute(), real))
        self._folder_map: dict[tuple[State, str | None], Path] | None = None
        self._escapes: list[tuple[Path, str]] = []
        # the session stamp that ends every note written through this board
        # (docs/explanation/the-session-stamp.md)
        self.stamp: Callable[[], str] | None = None

    # ------------------------------------------------------------ reading

    def ensure(self) -> None:
        """Create the state folders and reason sub-folders that are missing."""
        ensure_folders(self.root)
        self._folder_map = None

    def load(self) -> BoardView:
        """Every ticket, informal INBOX file and malformed file on the board."""
        folders = self._folders()
        with locked(self.root, shared=True):
            return self._cache.load(self.root, folders, self._escapes)

    def get(self, ticket_id: str) -> Ticket:
        """The ticket with this id; ``TicketFormatError`` if its file is malformed."""
        path, state, reason = self._locate(ticket_id)
        if path.is_symlink():
            target = os.path.realpath(path)
            if not target.startswith(os.path.realpath(self.root) + os.sep):
                raise BoardError(
                    f"{path} is a symbolic link to {target}, outside the board; "
                    f"tether does not read it."
                )
        parsed = parse_file(path, state, reason)
        if isinstance(parsed, Ticket):
            return parsed
        raise TicketFormatError(
            "informal note (no front matter)" if parsed is INFORMAL else parsed, path=path
        )

    def _locate(self, ticket_id: str) -> tuple[Path, State, str | None]:
        if not is_ticket_id(ticket_id):
            raise BoardError(f"{ticket_id!r} is not a ticket id (T-YYYYMMDD-NNNNNNNNN).")
        name = f"{ticket_id}.md"
        for (state, reason), folder in self._folders().items():
            path = folder / name
            if path.is_file():
                return path, state, reason
        # An INBOX ticket may keep the name of the note it was made from.
        found = self.load().get(ticket_id)
        if found is not None:
            return found.path, found.state, found.reason
        raise TicketNotFoundError(ticket_id, self.root)

    def _folders(self) -> dict[tuple[State, str | None], Path]:
        """Each leaf folder (``root/STATE[/reason]``), checked once to resolve inside the root.

        A folder that is a symlink leading out of the board is refused for
        changes (``PathEscapeError``) and reported, not read, by ``load``.
        """
        if self._folder_map is None:
            folders: dict[tuple[State, str | None], Path] = {}
            escapes: list[tuple[Path, str]] = []
            real_root = resolve_inside(self.root, ".")  # once, not once per folder
            for state, reason in all_folders():
                plain = self.root / str(folder_of(state, reason))
                try:
                    folder_path(self.root, state, reason, real_root=real_root)
                except PathEscapeError as exc:
                    escapes.append((plain, f"{exc}; the board does not read it."))
                    continue
                folders[(state, reason)] = plain
            self._folder_map, self._escapes = folders, escapes
        return self._folder_map

    def folder(self, state: State, reason: str | None = None) -> Path:
        """The folder of a state (and reason); the reason is checked."""
        state = State(state)
        reason = check_reason(state, reason)
        found = self._folders().get((state, reason))
        if found is None:
            folder_path(self.root, state, reason)  # raises PathEscapeError with the details
            raise BoardError(f"the folder of {state.value} cannot be used.")  # pragma: no cover
        return found

    # ------------------------------------------------------------ changing

    def add(
        self,
        title: str,
        *,
        priority: str = "P2",
        body: str = "",
        state: State = State.INBOX,
        reason: str | None = None,
        front: Mapping[str, Any] | None = None,
    ) -> Ticket:
        """Create a ticket in ``state`` (default INBOX) with a new unique id."""
        return self.create(NewTicket(title, priority, body, state, reason, front))

    def create(
        self, new: NewTicket, *, ticket_id: str | None = None, created: datetime | None = None
    ) -> Ticket:
        """Create ``new`` with a new unique id (``add`` says the same in keywords).

        ``ticket_id`` and ``created`` are for re-creating a known ticket (an
        import of an earlier export); the id must be free.
        """
        state = State(new.state)
        if ticket_id is not None and not is_ticket_id(ticket_id):
            raise BoardError(f"{ticket_id!r} is not a ticket id (T-YYYYMMDD-NNNNNNNNN).")
        reason = check_reason(state, new.reason)
        folder = self.folder(state, reason)
        extra = dict(new.front or {})
        for key in _FIXED_KEYS:
            if key in extra:
                raise BoardError(f"`{key}` is set by the board; leave it out of the front matter.")
        now = created or self.clock.now().replace(microsecond=0)
        ensure_folders(self.root)  # before the lock: a new board folder gets its .gitignore
        with locked(self.root):
            while True:
                given = ticket_id
                if given is not None:
                    with contextlib.suppress(TicketNotFoundError):
                        taken = self._locate_file(given)
                        raise BoardError(f"ticket id {given} is taken ({taken}).")
                new_id = given or self._new_id(now)
                path = folder / f"{new_id}.md"
                fields = {
                    "id": new_id,
                    "title": new.title,
                    "priority": new.priority,
                    "created": now,
                }
                ticket = self._checked(path, state, reason, {**fields, **_set(extra)}, new.body)
                if create_exclusive(path, _render(ticket.front, new.body)):
                    return ticket
                if given is not None:
                    raise BoardError(f"ticket id {given} is taken ({path}).")

    def move(
        self,
        ticket_id: str,
        state: State,
        reason: str | None = None,
        *,
        note: str | None = None,
        front: Mapping[str, Any] | None = None,
        body: str | None = None,
    ) -> Ticket:
        """Move a ticket to ``state``/``reason``, updating its front matter and notes.

        Keys of the old state that the new one does not use (``blocked_by``,
        ``check``, ``until``, ``marker``, ``needs``) are dropped unless given in
        ``front``; a ``None`` value in ``front`` removes a key. The result is
        checked before anything is written, so a move that would make the ticket
        malformed is refused and changes nothing.
        """
        state = State(state)
        reason = check_reason(state, reason)
        with locked(self.root):
            ticket = self.get(ticket_id)
            return self._move(ticket, state, reason, note=note, front=front, body=body)

    def update(
        self,
        ticket_id: str,
        *,
        front: Mapping[str, Any] | None = None,
        note: str | None = None,
        body: str | None = None,
    ) -> Ticket:
        """Change front matter keys (``None`` removes one), the body, and/or add a note."""
        with locked(self.root):
            ticket = self.get(ticket_id)
            return self._move(
                ticket, ticket.state, ticket.reason, note=note, front=front, body=body
            )

    def triage(
        self,
        path: Path,
        *,
        title: str | None = None,
        priority: str | None = None,
        state: State = State.ACTIONABLE,
        reason: str | None = None,
        front: Mapping[str, Any] | None = None,
    ) -> Ticket:
        """Turn an INBOX entry into a ticket in ``state`` (default ACTIONABLE).

        ``path`` (absolute, or relative to INBOX/) is an informal file in INBOX/
        (any text; it becomes the body, the title defaults to its first line, the
        priority to P2) or an INBOX ticket (its title and priority are kept unless
        given). ``front`` adds keys the target state needs (``blocked_by``...).
        """
        state = State(state)
        if state is State.INBOX:
            raise BoardError("triage moves an entry out of INBOX; choose another state.")
        reason = check_reason(state, reason)
        inbox = self.folder(State.INBOX)
        real_inbox = resolve_inside(self.root, State.INBOX.value)
        real = resolve_inside(real_inbox, path)
        if real.parent != real_inbox or not real.is_file():
            raise BoardError(f"{path} is not a file in {inbox}.")
        source = inbox / real.name
        with locked(self.root):
            parsed = parse_file(source, State.INBOX, None)
            changes = dict(front or {})
            if isinstance(parsed, Ticket):
                if priority:
                    changes["priority"] = priority
                if title:
                    changes["title"] = title
                return self._move(parsed, state, reason, note=None, front=changes)
            if parsed is not INFORMAL and parsed is not EMPTY:  # a person may triage an empty note
                raise TicketFormatError(parsed, path=source)
            return self._triage_note(source, title, priority or "P2", state, reason, changes)

    # ------------------------------------------------------------ internals

    def _triage_note(
        self,
        source: Path,
        title: str | None,
        priority: str,
        state: State,
        reason: str | None,
        extra: dict[str, Any],
    ) -> Ticket:
        try:
            text = source.read_bytes().decode("utf-8")
        except UnicodeDecodeError:
            raise BoardError(
                "this note is not UTF-8 text; convert it (or write a ticket for it by hand).",
                path=source,
            ) from None
        body = text.replace("\r\n", "\n")
        title = title or _first_line(body) or source.stem
        now = self.clock.now().replace(microsecond=0)
        ticket_id = self._new_id(now)
        for key in _FIXED_KEYS:
            extra.pop(key, None)
        fields = {"id": ticket_id, "title": title, "priority": priority, "created": now}
        target = self.folder(state, reason) / f"{ticket_id}.md"
        ticket = self._checked(target, state, reason, {**fields, **_set(extra)}, body)
        # Step 1: the note becomes a ticket in place (still one file, still in INBOX).
        rewrite(source, _render(ticket.front, body))
        # Step 2: one rename into the target folder, under the ticket's name.
        rename_into(source, target)
        return ticket

    def _move(
        self,
        ticket: Ticket,
        state: State,
        reason: str | None,
        *,
        note: str | None,
        front: Mapping[str, Any] | None,
        body: str | None = None,
    ) -> Ticket:
        changes = dict(front or {})
        for key in _FIXED_KEYS:
            if key in changes and changes[key] != ticket.front.get(key):
                raise BoardError(f"`{key}` of a ticket cannot be changed.", path=ticket.path)
        new_front = dict(ticket.front)
        if (state, reason) != (ticket.state, ticket.reason):
            keep = STATE_KEYS.get(state, ())
            for key in ALL_STATE_KEYS:
                if key not in keep:
                    new_front.pop(key, None)
        new_front.update(changes)
        new_front = _set(new_front)
        body = ticket.body if body is None else body
        if note:
            if self.stamp is not None:
                note = f"{note.rstrip()}\n{self.stamp()}"
            body = _with_note(body, note, self.clock.now())
        target_folder = self.folder(state, reason)
        same_folder = target_folder == ticket.path.parent
        target = ticket.path if same_folder else target_folder / f"{ticket.id}.md"
        try:
            moved = self._checked(target, state, reason, new_front, body)
        except TicketFormatError as exc:  # name the file that exists, not the one refused
            raise TicketFormatError(exc.reason, path=ticket.path) from None
        if same_folder:
            if new_front != dict(ticket.front) or body != ticket.body:
                rewrite(ticket.path, _render(moved.front, body))
            return moved
        # Rewrite in place, then one rename: a crash between the two leaves the
        # updated ticket where it was. So that it is well-formed there, the old
        # state's own keys (an ``until``, a ``check``) stay until the rename and
        # are dropped by one more rewrite in the new folder.
        interim = {**moved.front}
        for key in STATE_KEYS.get(ticket.state, ()):
            if key in ticket.front and key not in interim:
                interim[key] = ticket.front[key]
        if interim != dict(ticket.front) or body != ticket.body:
            rewrite(ticket.path, _render(ordered(interim), body))
        rename_into(ticket.path, target)
        if interim != moved.front:
            rewrite(target, _render(moved.front, body))
        return moved

    def _checked(
        self, path: Path, state: State, reason: str | None, front: dict[str, Any], body: str
    ) -> Ticket:
        if front.get("priority") not in PRIORITIES:
            raise BoardError(f"unknown priority {front.get('priority')!r}; use P1, P2 or P3.")
        if isinstance(front.get("title"), str):
            front["title"] = " ".join(front["title"].split())
        from tether.board import ticket_yaml as frontmatter

        front = ordered(front)
        # What is written is what a reader will parse: check the round trip.
        text = frontmatter.dump(front)
        return ticket_from(path, state, reason, frontmatter.parse(text), body)

    def new_id(self, created: datetime | None = None) -> str:
        """A ticket id that is free right now (``add`` still refuses it if taken later)."""
        return self._new_id(created or self.clock.now())

    def _new_id(self, now: datetime) -> str:
        prefix = f"T-{now:%Y%m%d}-"
        known = self._cache.view
        import secrets  # here: readers of the board never make an id

        while True:
            candidate = f"{prefix}{secrets.randbelow(10**9):09d}"
            if known is not None and known.get(candidate) is not None:
                continue
            try:
                self._locate_file(candidate)
            except TicketNotFoundError:
                return candidate

    def _locate_file(self, ticket_id: str) -> Path:
        name = f"{ticket_id}.md"
        for folder in self._folders().values():
            path = folder / name
            if os.path.lexists(path):
                return path
        raise TicketNotFoundError(ticket_id, self.root)


def _set(front: Mapping[str, Any]) -> dict[str, Any]:
    """Drop keys whose value is ``None`` (that is how a caller removes a key)."""
    return {k: v for k, v in front.items() if v is not None}


def _render(front: Mapping[str, Any], body: str) -> bytes:
    from tether.board import ticket_yaml as frontmatter

    return frontmatter.join(frontmatter.dump(front), body).encode("utf-8")


def _first_line(text: str) -> str:
    for line in text.splitlines():
        line = line.strip().lstrip("#").strip()
        if line:
            return line[:120]
    return ""


def _with_note(body: str, note: str, now: datetime) -> str:
    """The body with a dated list item; further note lines are indented under it."""
    lines = note.strip().splitlines() or [""]
    stamp = now.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
    entry = f"- {stamp} {lines[0]}\n" + "".join(f"  {line}\n" for line in lines[1:])
    if body and not body.endswith("\n"):
        body += "\n"
    last = body.rstrip("\n").rpartition("\n")[2]
    if body.strip() and not last.startswith(("- ", "  ")) and not body.endswith("\n\n"):
        body += "\n"  # a list after a paragraph needs a blank line in Markdown
    return body + entry
