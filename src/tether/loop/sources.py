"""Level-2 sources: each first *locates* its place, then — only if located — *reads* it.

Two kinds are built in. A ``files`` source is a folder of text files (a
decisions folder, a profile folder); it is located when the folder exists. A
``command`` source runs one or several commands (argv, no shell, with a
timeout, one after the other: ``usmc working``, ``lessons``, ``facts``); it is
located when every executable is found, and each output is JSON: either
``{"status": "found"|"empty", "items": [...]}`` or a plain list of items. An
item is a string or an object with ``text`` (or ``title``/``summary``/
``note``), optionally ``id``, ``confidence`` and ``ticket``/``tickets``.

A command source may have a fingerprint command, run when it is located: the
guard's view of it. When that command lists items, the chain counts those not
seen yet (new working-memory entries); any other output counts as it is.

Sources report what is there; deciding what counts as *new work* is the
chain's job (``level2``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from tether.board.states import TICKET_ID

# The commands' runner loads subprocess: only a command source needs it, when asked.
if TYPE_CHECKING:
    from tether.loop.commands import CommandResult

DECISIONS_TODO = "TO-DECIDE-USER"
TEXT_SUFFIXES = (".md", ".txt", ".json", ".jsonl")
_CONFIDENCE_WORDS = {"high": 0.9, "medium": 0.6, "low": 0.2}
_CONFIDENCE_MARKS = {"🟢": 0.9, "🟡": 0.6, "🔴": 0.2}
_CONFIDENCE_TEXT = re.compile(
    r"confidence\s*[:=]?\s*(?P<value>[0-9]*\.?[0-9]+|high|medium|low)", re.IGNORECASE
)
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?")


@dataclass(frozen=True)
class Item:
    key: str  # stable identity, to tell new items from ones already reported
    text: str
    tickets: tuple[str, ...] = ()
    confidence: float | None = None
    origin: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "tickets": list(self.tickets),
            "confidence": self.confidence,
            "origin": self.origin,
        }


@dataclass(frozen=True)
class Location:
    located: bool
    where: str
    reason: str | None = None  # why it could not be located
    situation: str = ""  # this source's part of the guard's fingerprint
    # the keys of the items the fingerprint command listed (the chain counts the unseen)
    fingerprint_keys: tuple[str, ...] | None = None
    prefetched: CommandResult | None = None  # the fingerprint command's run, reused by read
    failure: str | None = None  # located, but its fingerprint command failed: not answerable


@dataclass
class Reading:
    ok: bool
    items: list[Item] = field(default_factory=list)
    user_items: list[str] = field(default_factory=list)  # e.g. undecided decisions
    read: list[str] = field(default_factory=list)  # what was read, for the evidence
    claimed: str | None = None  # the commands' own status, if every one gave the same
    note: str | None = None  # why nothing was read, when that is no failure
    inert: set[str] = field(default_factory=set)  # keys of items a command said are no work
    error: str | None = None


class Source(Protocol):
    role: str
    kind: str

    def locate(self) -> Location: ...

    def read(self, location: Location) -> Reading: ...


def _key(origin: str, text: str) -> str:
    return hashlib.sha256(f"{origin}\0{text}".encode()).hexdigest()[:20]


def confidence_of(text: str) -> float | None:
    for mark, value in _CONFIDENCE_MARKS.items():
        if mark in text:
            return value
    match = _CONFIDENCE_TEXT.search(text)
    if match is None:
        return None
    word = match["value"].lower()
    if word in _CONFIDENCE_WORDS:
        return _CONFIDENCE_WORDS[word]
    number = float(word)
    return number / 100 if number > 1 else number


def item_from(raw: Any, origin: str) -> Item | None:
    """An item from a JSON value (string or object); None for anything else."""
    if isinstance(raw, str):
        text = raw.strip()
        return (
            Item(
                _key(origin, text),
                text,
                tuple(TICKET_ID.findall(text)),
                confidence_of(text),
                origin,
            )
            if text
            else None
        )
    if not isinstance(raw, Mapping):
        return None
    text = next(
        (
            str(raw[k])
            for k in ("text", "title", "summary", "note", "content")
            if isinstance(raw.get(k), str | int | float) and str(raw[k]).strip()
        ),
        "",
    )
    if not text:
        text = json.dumps(raw, sort_keys=True, ensure_ascii=False)[:500]
    tickets = raw.get("tickets", raw.get("ticket", []))
    named = (
        [tickets] if isinstance(tickets, str) else [t for t in tickets or [] if isinstance(t, str)]
    )
    named += TICKET_ID.findall(text)
    confidence = raw.get("confidence")
    value: float | None
    if isinstance(confidence, bool):
        value = None
    elif isinstance(confidence, int | float):
        value = float(confidence) / 100 if confidence > 1 else float(confidence)
    elif isinstance(confidence, str):
        value = confidence_of(f"confidence {confidence}")
    else:
        value = confidence_of(text)
    identity = raw.get("id")
    key = _key(origin, str(identity)) if isinstance(identity, str | int) else _key(origin, text)
    return Item(key, text.strip(), tuple(dict.fromkeys(named)), value, origin)


def text_items(text: str, origin: str) -> list[Item]:
    """One item per line of text (list bullets stripped; headings, fences, blanks skipped)."""
    items: list[Item] = []
    in_fence = False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("```"):
            in_fence = not in_fence
            continue
        if in_fence or not stripped or stripped.startswith(("#", "---", "<!--")):
            continue
        content = _BULLET.sub("", stripped).strip()
        item = item_from(content, origin)
        if item is not None:
            items.append(item)
    return items


class FileSource:
    """A folder of text files; located when the folder exists."""

    kind = "files"

    def __init__(self, role: str, folder: Path, display: str) -> None:
        self.role = role
        self.folder = folder
        self.display = display

    def _files(self) -> list[Path]:
        return sorted(
            p
            for p in self.folder.iterdir()
            if p.is_file() and not p.name.startswith(".") and p.suffix.lower() in TEXT_SUFFIXES
        )

    def locate(self) -> Location:
        if not self.folder.is_dir():
            return Location(False, self.display, f"folder {self.display} does not exist")
        try:
            files = self._files()
            stamps = [f"{p.name}:{p.stat().st_mtime_ns}:{p.stat().st_size}" for p in files]
        except OSError as exc:
            return Location(False, self.display, f"folder {self.display}: {exc.strerror}")
        situation = "|".join(stamps)
        unreadable = [p.name for p in files if not os.access(p, os.R_OK)]
        if unreadable:  # the read would fail: the guard must not hold on it
            failure = f"cannot read {', '.join(unreadable)} in {self.display}"
            return Location(True, self.display, situation=situation, failure=failure)
        return Location(True, self.display, situation=situation)

    def read(self, location: Location) -> Reading:
        reading = Reading(ok=True)
        try:
            files = self._files()
        except OSError as exc:
            return Reading(ok=False, error=f"cannot list {self.display}: {exc.strerror}")
        for path in files:
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError as exc:
                return Reading(ok=False, error=f"cannot read {path.name}: {exc.strerror}")
            reading.read.append(f"{self.display}/{path.name}")
            if self.role == "decisions.ledger" and path.name.startswith(DECISIONS_TODO):
                reading.user_items += [
                    f"undecided ({path.name}): {i.text}" for i in text_items(text, path.name)
                ]
            elif path.suffix.lower() in (".json", ".jsonl"):
                reading.items += _json_items(text, path.name)
            else:
                found = text_items(text, path.name)
                if self.role == "user.model":  # prose around the patterns is not a pattern
                    found = [i for i in found if i.confidence is not None]
                reading.items += found
        return reading


def _json_items(text: str, origin: str) -> list[Item]:
    values: list[Any] = []
    try:
        data = json.loads(text)
        values = data if isinstance(data, list) else [data]
    except ValueError:
        for line in text.splitlines():
            try:
                values.append(json.loads(line))
            except ValueError:
                continue
    return [item for raw in values if (item := item_from(raw, origin)) is not None]


class CommandSource:
    """One or several commands printing JSON; located when every executable is found."""

    kind = "command"

    def __init__(
        self,
        role: str,
        commands: Sequence[Sequence[str]],
        *,
        cwd: Path,
        timeout: float,
        env: Mapping[str, str],
        fingerprint_command: Sequence[str] | None = None,
    ) -> None:
        if not commands:
            raise ValueError("a command source needs at least one command")
        self.role = role
        self.commands = tuple(tuple(argv) for argv in commands)
        self.cwd = cwd
        self.timeout = timeout
        self.env = env
        self.fingerprint_command = tuple(fingerprint_command or ())

    @property
    def argv(self) -> tuple[str, ...]:
        """The first command."""
        return self.commands[0]

    def locate(self) -> Location:
        from tether.loop.commands import find_executable, run_command

        where = "; ".join(shlex.join(argv) for argv in self.commands)
        for argv in self.commands:
            if find_executable(argv[0], self.cwd, self.env) is None:
                return Location(False, where, f"`{argv[0]}` is not on PATH")
        if not self.fingerprint_command:
            return Location(True, where)
        result = run_command(
            self.fingerprint_command, cwd=self.cwd, timeout=self.timeout, env=self.env
        )
        if not result.ok:
            tail = f": {result.tail[-200:]}" if result.tail else ""
            return Location(
                True, where, situation=result.summary(), failure=f"{result.summary()}{tail}"
            )
        parsed = _parse(result.stdout, self.fingerprint_command[0])
        if isinstance(parsed, str) and self.fingerprint_command == self.commands[0]:
            # the source's own first command: output it cannot read is a failing source
            return Location(
                True, where, situation=result.summary(), failure=f"{result.summary()}: {parsed}"
            )
        if isinstance(parsed, str):  # not a list of items: the output itself is the view
            text = result.stdout.strip()
            if len(text) > 200:
                text = "sha256:" + hashlib.sha256(text.encode()).hexdigest()[:32]
            return Location(True, where, situation=text, prefetched=result)
        keys = tuple(sorted({i.key for i in parsed[0]}))
        return Location(True, where, fingerprint_keys=keys, prefetched=result)

    def read(self, location: Location) -> Reading:
        from tether.loop.commands import run_command

        reading = Reading(ok=True)
        claims: set[str | None] = set()
        for argv in self.commands:
            reused = location.prefetched
            result = (
                reused
                if reused is not None and reused.argv == argv
                else run_command(argv, cwd=self.cwd, timeout=self.timeout, env=self.env)
            )
            described = result.summary()
            reading.read.append(described)
            if not result.ok:
                tail = f": {result.tail[-200:]}" if result.tail else ""
                return Reading(ok=False, read=reading.read, error=f"{described}{tail}")
            parsed = _parse(result.stdout, argv[0])
            if isinstance(parsed, str):
                return Reading(ok=False, read=reading.read, error=f"{described}: {parsed}")
            items, claimed = parsed
            reading.items += items
            claims.add(claimed)
            if claimed == "empty":
                reading.inert |= {i.key for i in items}
        reading.claimed = claims.pop() if len(claims) == 1 else None
        return reading


def _parse(stdout: str, origin: str) -> tuple[list[Item], str | None] | str:
    """A command's items and its own status, or what is wrong with its output."""
    try:
        data = json.loads(stdout or "null")
    except ValueError:
        return "output is not JSON"
    if isinstance(data, list):
        return [i for raw in data if (i := item_from(raw, origin)) is not None], None
    if isinstance(data, dict) and data.get("status") in ("found", "empty"):
        raw_items = data.get("items") or []
        items = (
            [i for raw in raw_items if (i := item_from(raw, origin)) is not None]
            if isinstance(raw_items, list)
            else []
        )
        return items, str(data["status"])
    return 'expected a JSON list or {"status": "found"|"empty", "items": [...]}'
