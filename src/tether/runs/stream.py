"""Incremental reading of a live agent stream and of a growing session file."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from tether.events.lines import MAX_LINE_BYTES, OVERSIZE
from tether.events.model import AnyEvent
from tether.harnesses.base import Harness


class LineBuffer:
    """Feed it chunks as they arrive; it hands back complete lines (no newline).

    A partial line is kept as a list of pieces and joined only once its newline
    arrives, so a long line spread over many chunks costs linear time.
    """

    def __init__(self, max_line: int = MAX_LINE_BYTES) -> None:
        self._parts: list[bytes] = []
        self._size = 0
        self._skipping = False
        self._head = b""
        self._max = max_line

    def feed(self, chunk: bytes) -> list[bytes]:
        nl = chunk.find(b"\n")
        if nl < 0:
            self._hold(chunk)
            return []
        lines = chunk.split(b"\n")
        tail = lines.pop()
        if self._skipping:
            self._skipping = False
            lines[0] = OVERSIZE + self._head
        elif self._parts:
            self._parts.append(lines[0])
            lines[0] = self._take_parts()
        if tail:
            self._hold(tail)
        if len(chunk) > self._max:
            lines = [OVERSIZE + line[:256] if len(line) > self._max else line for line in lines]
        return lines

    def _hold(self, piece: bytes) -> None:
        if self._skipping or not piece:
            return
        self._parts.append(piece)
        self._size += len(piece)
        if self._size > self._max:
            self._head = b"".join(self._parts)[:256]
            self._parts.clear()
            self._size = 0
            self._skipping = True

    def _take_parts(self) -> bytes:
        line = b"".join(self._parts)
        self._parts.clear()
        self._size = 0
        return OVERSIZE + line[:256] if len(line) > self._max else line

    def flush(self) -> list[bytes]:
        """The last line when the stream ended without a newline."""
        if self._skipping:
            self._skipping = False
            return [OVERSIZE + self._head]
        if self._parts:
            return [self._take_parts()]
        return []


class SessionTail:
    """Follows a harness's own session file (e.g. Codex's rollout) as it grows."""

    def __init__(self, harness: Harness, env: Mapping[str, str]) -> None:
        self._harness = harness
        self._env = env
        self._path: Path | None = None
        self._offset = 0
        self._lines = LineBuffer()

    @property
    def path(self) -> Path | None:
        return self._path

    def poll(self, session_id: str | None) -> list[AnyEvent]:
        if self._path is None:
            if not session_id:
                return []
            found = self._harness.session_file(session_id, self._env)
            if found is None or not found.exists():
                return []
            self._path = found
        try:
            with self._path.open("rb") as f:
                f.seek(self._offset)
                data = f.read()
        except OSError:
            return []
        if not data:
            return []
        self._offset += len(data)
        events: list[AnyEvent] = []
        for line in self._lines.feed(data):
            events.extend(self._harness.parse_session_line(line))
        return events

    def drain(self, session_id: str | None) -> list[AnyEvent]:
        """Everything left, including a last line without newline."""
        events = self.poll(session_id)
        for line in self._lines.flush():
            events.extend(self._harness.parse_session_line(line))
        return events
