"""The board's parse cache between processes: one file in the tether home.

A new process (``tether status``, a loop tick, ``tether board list``) would
otherwise read and parse every ticket file again. The file keeps what each file
of the board parsed to (a ticket, "informal", or the error message), keyed by
its path inside the board and its ``stat``: ``st_mtime_ns``, ``st_ctime_ns``,
``st_size`` and inode. A record is used only while all four are equal, so a
ticket edited, added, removed or renamed is read again at once (an edit that
puts the old mtime back still moves the ctime, which no program can set).

Three rules keep that exact:

- A file changed within one timestamp tick of the read could keep its mtime,
  ctime and size; so a record is written only for a file whose mtime and ctime
  were more than ``RACY_NS`` older than the read (git's "racily clean" rule).
  Younger files are simply parsed again by the next process.
- The file names the format, the tether version and the parser's own source
  files (size and mtime); any difference, any other board, a checksum that does
  not match, or a file that does not decode (torn, truncated, edited by hand)
  is ignored whole and replaced at the next write. Nothing in it is ever
  executed (MessagePack through msgspec, not pickle).
- Writes go to a temp file beside it and are renamed into place, so concurrent
  writers never leave a mixed file: a reader sees one writer's whole file, and
  any record it holds is checked against the file's ``stat`` before use. It is
  a cache, so it is not fsynced: a file lost or torn by a crash is rebuilt.
  Where it cannot be written (a read-only home, as inside an agent's sandbox)
  nothing is said and the board is parsed as if there were no cache.
"""

from __future__ import annotations

import math
import os
import zlib
from collections.abc import Mapping
from datetime import date, datetime
from pathlib import Path
from typing import Any, Final

from tether.board.ticket import KEY_ORDER, Ticket, build

FORMAT: Final = 2
# A file changed less than this before it was read is not written down (see above).
RACY_NS: Final = 2_000_000_000
FOLDER: Final = "cache"
# The file: this tag, the CRC-32 of the rest (4 bytes, big-endian), then MessagePack.
MAGIC: Final = b"tether-board-cache\n"

# What a record holds: (mtime_ns, ctime_ns, size, inode, kind, payload).
Record = list[Any]
# A file's parse in memory (``cache.ParseCache``): (mtime_ns, ctime_ns, size, inode,
# parsed, settled), settled = the file had not changed for RACY_NS when it was read.
Entry = tuple[int, int, int, int, "Ticket | str", bool]
TICKET, INFORMAL_KIND, ERROR = "t", "i", "e"


def store_path(home: Path, real_root: str) -> Path:
    """The cache file of the board at ``real_root`` (its real path) in the tether ``home``.

    Named by a CRC of the path (cheap; the file names its board, so two boards of
    one home that share a name only take turns, never mix)."""
    crc = zlib.crc32(real_root.encode("utf-8", "surrogateescape"))
    return home / FOLDER / f"board-{crc:08x}.bin"


def stamp() -> list[Any]:
    """What the records depend on besides the files: the format, tether's version and
    the parser's own source files (an edited rule in a development install counts)."""
    from tether import __version__

    here = Path(__file__).parent
    parts: list[Any] = [FORMAT, __version__]
    for name in ("cache.py", "frontmatter.py", "ticket.py", "states.py", "stored.py"):
        parts.append(_signature(here / name))
    parts.append(_signature(here.parent / "frontmatter.py"))
    return parts


def _signature(path: Path) -> list[int] | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return [info.st_mtime_ns, info.st_size]


def read(path: Path, root: str, expected: list[Any]) -> dict[str, Record] | None:
    """The records of the board at ``root``; None when the file is missing, unreadable,
    damaged, not ours, or from another format, version or board (it is then rewritten)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    head = len(MAGIC) + 4
    if not data.startswith(MAGIC) or len(data) < head:
        return None
    body = memoryview(data)[head:]
    if zlib.crc32(body) != int.from_bytes(data[len(MAGIC) : head], "big"):
        return None
    import msgspec  # here: a board without a cache file never needs it

    try:
        found = msgspec.msgpack.decode(body)
    except msgspec.DecodeError:
        return None
    if (
        found.__class__ is not dict
        or found.get("stamp") != expected
        or found.get("root") != root
        or found.get("files").__class__ is not dict
    ):
        return None
    files: dict[str, Record] = found["files"]
    return files


def write(path: Path, root: str, expected: list[Any], files: Mapping[str, Record]) -> bool:
    """Replace the cache file (temp file + rename); False when it cannot be written
    (a read-only home, as inside the sandbox): the board is then parsed each time."""
    import msgspec

    from tether.fs import atomic_write_bytes

    folder = path.parent
    try:
        if not folder.is_dir():
            folder.mkdir(mode=0o700)
        elif not os.access(folder, os.W_OK):  # a read-only mount: not even encoded
            return False
        body = msgspec.msgpack.encode({"stamp": expected, "root": root, "files": files})
        data = MAGIC + zlib.crc32(body).to_bytes(4, "big") + body
        atomic_write_bytes(path, data, durable=False)
    except (OSError, msgspec.EncodeError):
        return False
    return True


def matches(record: Record, st: os.stat_result) -> bool:
    """The record was made from a file with this ``stat``."""
    return bool(
        record[0] == st.st_mtime_ns
        and record[1] == st.st_ctime_ns
        and record[2] == st.st_size
        and record[3] == st.st_ino
    )


def settled(st: os.stat_result, read_at_ns: int) -> bool:
    """The file had not changed for ``RACY_NS`` when it was read (its record may be kept)."""
    return max(st.st_mtime_ns, st.st_ctime_ns) < read_at_ns - RACY_NS


def entry(st: os.stat_result, parsed: Ticket | str, read_at_ns: int) -> Entry:
    """The memory entry of a file parsed now (``read_at_ns``: taken before it was read)."""
    return (
        st.st_mtime_ns,
        st.st_ctime_ns,
        st.st_size,
        st.st_ino,
        parsed,
        settled(st, read_at_ns),
    )


class Walk:
    """One walk of the board and the cache file: the records the file holds (``old``, None
    when the board has no file), looked up by path inside the board, and the records it
    should hold after this walk (``records``)."""

    def __init__(
        self, old: dict[str, Record] | None, prefix: int, read_at: int, informal: str
    ) -> None:
        self.old = old
        self.prefix = prefix  # len(board root) + 1: the path inside the board = path[prefix:]
        self.read_at = read_at  # taken before any file of the walk was read
        self.informal = informal
        self.records: dict[str, Record] = {}
        self.reused = 0  # records kept as they were in the file

    def find(
        self, path: str, st: os.stat_result, file: Path, state: Any, reason: str | None
    ) -> Entry | None:
        """The entry the file's record gives, if it has one made from this very ``stat``
        (the record is then kept as it is)."""
        if self.old is None:
            return None
        name = path[self.prefix :]
        record = self.old.get(name)
        if record is None or not matches(record, st):
            return None
        parsed = decode(record, file, state, reason, self.informal)
        if parsed is None:
            return None
        self.records[name] = record
        self.reused += 1
        return (st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino, parsed, True)

    def parsed(self, path: str, st: os.stat_result, entry: Entry) -> None:
        """Put the entry of a file parsed now into the records, if it is settled."""
        if self.old is not None and entry[5]:
            record = encode(entry[4], self.informal, st)
            if record is not None:
                self.records[path[self.prefix :]] = record

    def kept(self, path: str, st: os.stat_result, entry: Entry) -> None:
        """Put the entry of a file parsed by an earlier walk into the records, if it is
        settled (the file's own record when it has one for this ``stat``)."""
        if self.old is None or not entry[5]:
            return
        name = path[self.prefix :]
        record = self.old.get(name)
        if record is not None and matches(record, st):
            self.reused += 1
        else:
            record = encode(entry[4], self.informal, st)
            if record is None:
                return
        self.records[name] = record

    def differs(self) -> bool:
        """The records to write are not those the file holds."""
        if self.old is None:
            return False
        return self.reused != len(self.records) or self.reused != len(self.old)


def encode(parsed: Ticket | str, informal: str, st: os.stat_result) -> Record | None:
    """The record of a parse, or None when it holds a value that cannot be kept exactly.

    A ticket is its front matter (``_front``), its body, and only those fields
    that are not the front matter's own value (a title that was stripped, a
    ``created`` that was converted to UTC...), so most tickets carry each value once.
    """
    head: Record = [st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino]
    if parsed.__class__ is not Ticket:
        if parsed is informal:
            return [*head, INFORMAL_KIND, None]
        return [*head, ERROR, parsed]
    ticket: Ticket = parsed
    front = ticket.front
    values = _front(front)
    if values is None:
        return None
    fields = ticket.__dict__
    own: dict[str, Any] = {}
    for name in _FROM_FRONT:
        value = fields[name]
        if not _same(value, _given(front, name)):
            own[name] = _encoded(value)
    return [*head, TICKET, [*values, ticket.body, own or None]]


def decode(
    record: Record, path: Path, state: Any, reason: str | None, informal: str
) -> Ticket | str | None:
    """What the record says the file parsed to; None when the record is malformed."""
    try:
        kind, payload = record[4], record[5]
        if kind != TICKET:
            if kind == ERROR and payload.__class__ is str:
                return str(payload)
            return informal if kind == INFORMAL_KIND else None
        values, dates, stamps, body, own = payload
        front = _unfront(values, dates, stamps)
        get = front.get
        runs = get("runs")
        check = get("check")
        fields = {
            "id": get("id"),
            "title": get("title"),
            "priority": get("priority"),
            "created": get("created"),
            "state": state,
            "reason": reason,
            "path": path,
            "body": body,
            "front": front,
            "runs": () if runs is None else tuple(runs),
            "blocked_by": get("blocked_by"),
            "check": list(check) if check.__class__ is list else check,
            "until": get("until"),
            "marker": get("marker"),
            "needs": get("needs"),
            "report": get("report"),
            "last_run": get("last_run"),
        }
        if own is not None:
            for name, value in own.items():
                fields[name] = _DECODE[name](value)
        if (
            fields["created"].__class__ is not datetime
            or fields["id"].__class__ is not str
            or body.__class__ is not str
        ):
            return None
    except (AttributeError, IndexError, KeyError, TypeError, ValueError):
        return None
    return build(fields)


# The Ticket fields that come from a front matter key of the same name (the known
# keys); body, front, state, reason and path are not among them.
_FROM_FRONT = KEY_ORDER


def _given(front: Mapping[str, Any], name: str) -> Any:
    """The field as the front matter gives it when no conversion was needed."""
    value = front.get(name)
    if name == "runs":
        return () if value is None else tuple(value) if value.__class__ is list else value
    if name == "check" and value.__class__ is list:
        return list(value)  # the ticket's own copy, as ``ticket_from`` makes it
    return value


def _same(value: Any, given: Any) -> bool:
    """Equal and of one class; timestamps also in one zone (equal instants are not enough)."""
    if value.__class__ is not given.__class__ or value != given:
        return False
    return value.__class__ is not datetime or value.tzinfo == given.tzinfo


def _encoded(value: Any) -> Any:
    if value.__class__ is tuple:
        return list(value)
    if isinstance(value, date):
        return value.isoformat()
    return value


def _iso_date(value: str) -> date:
    return date.fromisoformat(value)


def _text(value: Any) -> Any:
    if value is None or value.__class__ is str:
        return value
    raise TypeError


_DECODE: dict[str, Any] = {
    **{name: _text for name in _FROM_FRONT},
    "created": datetime.fromisoformat,
    "until": lambda v: None if v is None else _iso_date(v),
    "runs": tuple,
    "check": lambda v: v if v is None or v.__class__ is str else list(v),
}


# Front matter: MessagePack carries it as is, except dates and timestamps at the top
# level, which are written as ISO text and named in "dates" / "stamps". Anything else it
# cannot give back exactly (a nested date, a non-text key, a set) is not stored.


def _front(front: Mapping[str, Any]) -> tuple[dict[str, Any], list[str], list[str]] | None:
    values: dict[str, Any] = {}
    dates: list[str] = []
    stamps: list[str] = []
    for key, value in front.items():
        if key.__class__ is not str:
            return None
        cls = value.__class__
        if cls is datetime:
            stamps.append(key)
            values[key] = value.isoformat()
        elif cls is date:
            dates.append(key)
            values[key] = value.isoformat()
        elif _plain(value):
            values[key] = value
        else:
            return None
    return values, dates, stamps


def _unfront(values: dict[str, Any], dates: list[str], stamps: list[str]) -> dict[str, Any]:
    if values.__class__ is not dict:
        raise TypeError
    values = dict(values)  # the record stays as read: it may be written again
    for key in dates:
        values[key] = date.fromisoformat(values[key])
    for key in stamps:
        values[key] = datetime.fromisoformat(values[key])
    return values


_SCALARS = (str, bool, type(None))
_INT_RANGE = range(-(2**63), 2**63)


def _plain(value: Any) -> bool:
    """Made only of what MessagePack gives back unchanged: text, 64-bit integers, finite numbers,
    booleans, null, lists, and tables with text keys."""
    cls = value.__class__
    if cls in _SCALARS:
        return True
    if cls is int:
        return value in _INT_RANGE
    if cls is float:
        return math.isfinite(value)
    if cls is list:
        return all(_plain(item) for item in value)
    if cls is dict:
        return all(k.__class__ is str and _plain(v) for k, v in value.items())
    return False
