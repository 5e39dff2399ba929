"""Line framing written once: a byte stream split into lines, in bounded memory."""

from __future__ import annotations

from collections.abc import Iterator
from typing import BinaryIO

from tether.events.model import MalformedLine, clip

# Longer lines are skipped up to their newline and recorded as malformed, so one
# runaway line cannot make memory grow without bound.
MAX_LINE_BYTES = 64 * 1024 * 1024
READ_CHUNK = 1024 * 1024


def iter_lines(stream: BinaryIO, max_line: int = MAX_LINE_BYTES) -> Iterator[bytes]:
    """Split a byte stream into lines without the newline, in bounded memory.

    Works on pipes (partial reads) and files. A final line without a newline is
    yielded as it is (a truncated last line is then the adapter's to judge). A
    line longer than ``max_line`` is yielded as ``b""`` prefixed marker via
    :func:`oversize_marker` so that callers can record it as malformed.
    """
    buf = bytearray()
    skipping = False
    read = getattr(stream, "read1", stream.read)
    while True:
        chunk = read(READ_CHUNK)
        if not chunk:
            break
        start = 0
        while True:
            nl = chunk.find(b"\n", start)
            if nl < 0:
                if not skipping:
                    buf += chunk[start:]
                    if len(buf) > max_line:
                        yield OVERSIZE + bytes(buf[:256])
                        buf.clear()
                        skipping = True
                break
            if skipping:
                skipping = False
            else:
                if buf:
                    buf += chunk[start:nl]
                    line = bytes(buf)
                    buf.clear()
                else:
                    line = chunk[start:nl]
                if len(line) > max_line:
                    yield OVERSIZE + line[:256]
                else:
                    yield line
            start = nl + 1
    if buf and not skipping:
        yield bytes(buf)


OVERSIZE = b"\x00tether:oversize\x00"


def oversize_event(line: bytes) -> MalformedLine | None:
    """The malformed record for a line that :func:`iter_lines` cut, else None."""
    if line.startswith(OVERSIZE):
        return MalformedLine(raw=clip(line[len(OVERSIZE) :]), error="line too long")
    return None
