"""Codex's rollout file as the gate reads it: which model response a tool call belongs to.

Codex writes one ``token_usage_record`` line per completed model response to
its rollout (``$CODEX_HOME/sessions/.../rollout-*.jsonl``, the hook payload's
``transcript_path``); that is how a Codex run's iterations are counted
(``harnesses/codex.py`` reads the same lines for the supervisor). Codex records
a response's tool-call item before it starts the call, and so before the
``PreToolUse`` hook runs; the response's ``token_usage_record`` may come later,
once the response is complete (a call can start while the response still
streams). One writer appends the lines in the order they were recorded, so:

- a call whose item is in the file belongs to response ``1 + the records
  before it``: exact;
- a call whose item is not written yet comes after every line that is, so its
  response is later than every record in the file.

Standard library only (the gate reads this on a Codex call of a run with an
iteration limit). No line is decoded as a whole: a rollout holds every tool
output of the session, and the gate only looks for the few markers it needs.
"""

from __future__ import annotations

import bisect
import os
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

# The line type of one completed model response (its token usage).
RECORD_TYPE = "token_usage_record"
_RECORD = b'"type":"' + RECORD_TYPE.encode() + b'"'
_ITEM = b'"type":"response_item"'
_PAYLOAD_TYPE = b'"payload":{"type":"'
# A line's own type comes after its timestamp and ordinal; a payload's later.
_HEAD = 120
# A rollout larger than this is not read by the gate (the supervisor's own
# reading of it stays): the read would cost every call of the run.
MAX_BYTES = 64 * 1024 * 1024
# Codex queues a call's item before the hook starts; the writer may lag a little.
WAIT_S = 0.25
_WAIT_STEP_S = 0.005


class CallStep:
    """Where a tool call stands in the rollout when its hook runs.

    ``completed``: the responses recorded so far. ``step``: the 1-based response
    the call belongs to, when its item is in the file (None: not written yet,
    so later than all ``completed``).
    """

    __slots__ = ("completed", "step")

    def __init__(self, completed: int, step: int | None) -> None:
        self.completed = completed
        self.step = step

    def past(self, limit: int) -> bool:
        """The call belongs to a response beyond ``limit``."""
        if self.step is not None:
            return self.step > limit
        return self.completed >= limit

    @property
    def earliest(self) -> int:
        """The earliest response the call can belong to."""
        return self.step if self.step is not None else self.completed + 1


def count_records(data: bytes) -> int:
    """The completed model responses in rollout text ``data``."""
    return len(_record_positions(data))


def _line_head(data: bytes, at: int) -> bytes:
    start = data.rfind(b"\n", 0, at) + 1
    return data[start : start + _HEAD]


def _record_positions(data: bytes) -> list[int]:
    found: list[int] = []
    at = data.find(_RECORD)
    while at >= 0:
        if _RECORD in _line_head(data, at):
            found.append(at)
        at = data.find(_RECORD, at + len(_RECORD))
    return found


def _call_item(data: bytes, call_id: str) -> int:
    """Where the tool-call item of ``call_id`` is in ``data`` (-1: not there).

    Its output (``function_call_output`` and the like) carries the same id but
    comes only after the call ran.
    """
    needle = b'"call_id":"' + call_id.encode("utf-8", "replace") + b'"'
    at = data.find(needle)
    while at >= 0:
        start = data.rfind(b"\n", 0, at) + 1
        head = data[start:at]
        kind = head.find(_PAYLOAD_TYPE)
        if _ITEM in head[:_HEAD] and kind >= 0:
            name = head[kind + len(_PAYLOAD_TYPE) :].split(b'"', 1)[0]
            if not name.endswith(b"_output"):
                return at
        at = data.find(needle, at + len(needle))
    return -1


def _place(data: bytes, call_id: str, base: int) -> tuple[CallStep, list[int]]:
    """The call's place in rollout text ``data`` that ``base`` records precede, and
    where the records in ``data`` are."""
    records = _record_positions(data)
    at = _call_item(data, call_id)
    step = None if at < 0 else base + 1 + bisect.bisect_left(records, at)
    return CallStep(base + len(records), step), records


def locate(data: bytes, call_id: str) -> CallStep:
    """The call's place in rollout text ``data``."""
    return _place(data, call_id, 0)[0]


# Harnesses whose hook payload names such a rollout (``transcript_path``).
HARNESSES = frozenset({"codex"})
# In the run folder: how far earlier calls of the run read the rollout.
SCAN_FILE = "rollout-scan"


def step_of(
    harness: str, transcript: str | None, call_id: str | None, home: str, env: Mapping[str, str]
) -> CallStep | None:
    """Where a run's call stands in its harness's rollout (None: no rollout to read)."""
    if harness not in HARNESSES or not transcript or not call_id:
        return None
    from tether.gate.runstop import run_dir

    folder = run_dir(home, env)
    scan = os.path.join(folder, SCAN_FILE) if folder is not None else None
    return call_step(transcript, call_id, scan=scan)


def _scanned(scan: str | None, path: str) -> tuple[int, int]:
    """(offset, records before it) an earlier call of the run left in ``scan``."""
    if scan is None:
        return 0, 0
    try:
        with open(scan, encoding="utf-8") as handle:
            head, _, name = handle.read().partition("\n")
        offset, records = (int(part) for part in head.split())
    except (OSError, ValueError):
        return 0, 0
    return (offset, records) if name == path and offset >= 0 and records >= 0 else (0, 0)


def _remember(scan: str, path: str, offset: int, records: int) -> None:
    tmp = f"{scan}.{os.getpid()}.tmp"
    try:
        with open(tmp, "w", encoding="utf-8") as handle:
            handle.write(f"{offset} {records}\n{path}")
        os.replace(tmp, scan)
    except OSError:
        pass


def _read(path: str, start: int) -> bytes | None:
    """The rollout from ``start`` on (None: not a regular file, or too much to read)."""
    try:
        # A regular file only: a FIFO named here would block the hook.
        if not os.path.isfile(path) or os.path.getsize(path) - start > MAX_BYTES:
            return None
        with open(path, "rb") as handle:
            handle.seek(start)
            return handle.read(MAX_BYTES)
    except OSError:
        return None


def call_step(
    path: str, call_id: str, wait: float = WAIT_S, scan: str | None = None
) -> CallStep | None:
    """Where call ``call_id`` stands in the rollout at ``path`` (None: no rollout to read).

    While the call's item is not in the file yet, the file is read again for up
    to ``wait`` seconds: Codex queued it before the hook started. ``scan`` keeps
    how far the run's calls read: every item of the response a hook's call
    belongs to comes after the response's last record but one (all of its calls
    are asked before the next response begins), so a later call reads from
    there on, never the whole file again.
    """
    offset, base = _scanned(scan, path)
    deadline = time.monotonic() + wait
    while True:
        try:
            if os.path.getsize(path) < offset:  # not the file that was read
                offset, base = 0, 0
        except OSError:
            return None
        data = _read(path, offset)
        if data is None:
            return None
        found, records = _place(data, call_id, base)
        if found.step is not None or time.monotonic() >= deadline:
            break
        time.sleep(_WAIT_STEP_S)
    if scan is not None and len(records) >= 2:
        end = data.find(b"\n", records[-2])
        if end >= 0:
            _remember(scan, path, offset + end + 1, base + len(records) - 1)
    return found
