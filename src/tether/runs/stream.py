"""Incremental reading of a live agent stream and of a growing session file."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from tether.events.model import AnyEvent
from tether.harnesses.base import MAX_LINE_BYTES, OVERSIZE, Harness


class LineBuffer:
    """Feed it chunks as they arrive; it hands back complete lines (no newline)."""

    def __init__(self, max_line: int = MAX_LINE_BYTES) -> None:
        self._buf = bytearray()
        self._skipping = False
        self._max = max_line

    def feed(self, chunk: bytes) -> list[bytes]:
        lines: list[bytes] = []
        start = 0
        while True:
            nl = chunk.find(b"\n", start)
            if nl < 0:
                if not self._skipping:
                    self._buf += chunk[start:]
                    if len(self._buf) > self._max:
                        lines.append(OVERSIZE + bytes(self._buf[:256]))
                        self._buf.clear()
                        self._skipping = True
                return lines
            if self._skipping:
                self._skipping = False
            else:
                self._buf += chunk[start:nl]
                line = bytes(self._buf)
                self._buf.clear()
                lines.append(OVERSIZE + line[:256] if len(line) > self._max else line)
            start = nl + 1

    def flush(self) -> list[bytes]:
        """The last line when the stream ended without a newline."""
        if self._buf and not self._skipping:
            line = bytes(self._buf)
            self._buf.clear()
            return [line]
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

