"""base.iter_lines: line framing over files and live pipes, in bounded memory."""

from __future__ import annotations

import io
import subprocess
import sys
import tracemalloc
from typing import BinaryIO, cast

import pytest

from tether.events.lines import OVERSIZE, iter_lines, oversize_event
from tether.events.model import MalformedLine


class Trickle(io.RawIOBase):
    """A stream that hands out at most ``step`` bytes per read, like a slow pipe."""

    def __init__(self, data: bytes, step: int) -> None:
        self._data = memoryview(data)
        self._pos = 0
        self._step = step

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        n = min(self._step, len(buffer), len(self._data) - self._pos)
        buffer[:n] = self._data[self._pos : self._pos + n]
        self._pos += n
        return n


def trickle(data: bytes, step: int) -> BinaryIO:
    return io.BufferedReader(Trickle(data, step))


class Endless(io.RawIOBase):
    """``size`` bytes of one line (no newline until the end) made on the fly."""

    def __init__(self, size: int, tail: bytes) -> None:
        self._left = size
        self._tail = tail

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        if self._left > 0:
            n = min(len(buffer), self._left)
            buffer[:n] = b"z" * n
            self._left -= n
            return n
        n = min(len(buffer), len(self._tail))
        buffer[:n] = self._tail[:n]
        self._tail = self._tail[n:]
        return n


def test_lines_without_newlines_and_blank_lines_kept() -> None:
    data = b'{"a":1}\n\n{"b":2}\r\n{"c":3}'
    assert list(iter_lines(io.BytesIO(data))) == [b'{"a":1}', b"", b'{"b":2}\r', b'{"c":3}']


def test_empty_stream_and_trailing_newline() -> None:
    assert list(iter_lines(io.BytesIO(b""))) == []
    assert list(iter_lines(io.BytesIO(b"x\n"))) == [b"x"]


@pytest.mark.parametrize("step", [1, 2, 3, 7, 64])
def test_partial_reads_reassemble_lines(step: int) -> None:
    lines = [b'{"type":"x","text":"caf\xc3\xa9"}', b"", b"plain", b"{" * 300]
    data = b"\n".join(lines) + b"\nlast-without-newline"
    got = list(iter_lines(trickle(data, step)))
    assert got == [*lines, b"last-without-newline"]


def test_live_pipe_from_a_child_writing_in_pieces() -> None:
    """A real child process flushes halves of lines; every line arrives whole."""
    script = (
        "import sys\n"
        "out = sys.stdout.buffer\n"
        "for i in range(200):\n"
        '    line = (\'{"type":"tick","n":%d,"pad":"%s"}\' % (i, \'p\' * (i * 37))).encode()\n'
        "    half = len(line) // 2\n"
        "    out.write(line[:half]); out.flush()\n"
        "    out.write(line[half:] + b'\\n'); out.flush()\n"
        "out.write(b'tail'); out.flush()\n"
    )
    with subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE) as child:
        assert child.stdout is not None
        got = list(iter_lines(cast(BinaryIO, child.stdout)))
    assert child.returncode == 0
    assert len(got) == 201
    assert got[-1] == b"tail"
    for i, line in enumerate(got[:-1]):
        assert line.startswith(b'{"type":"tick","n":%d,' % i)
        assert line.endswith(b'"}')


def test_oversize_line_is_cut_and_marked_and_the_stream_goes_on() -> None:
    big = b"B" * 5000
    data = b"first\n" + big + b"\nafter\n"
    got = list(iter_lines(io.BytesIO(data), max_line=1000))
    assert got[0] == b"first"
    assert got[1].startswith(OVERSIZE)
    assert got[1] == OVERSIZE + big[:256]
    assert got[2] == b"after"
    event = oversize_event(got[1])
    assert isinstance(event, MalformedLine)
    assert event.error == "line too long"
    assert oversize_event(b"first") is None


def test_oversize_line_split_over_many_reads() -> None:
    data = b"a\n" + b"C" * 10_000 + b"\nb\n" + b"D" * 3000
    got = list(iter_lines(trickle(data, 333), max_line=1000))
    assert got[0] == b"a"
    assert got[1] == OVERSIZE + b"C" * 256
    assert got[2] == b"b"
    assert got[3] == OVERSIZE + b"D" * 256  # oversize and unterminated: one marker
    assert len(got) == 4


def test_line_at_the_limit_is_kept_whole() -> None:
    line = b"E" * 1000
    assert list(iter_lines(io.BytesIO(line + b"\n"), max_line=1000)) == [line]
    assert list(iter_lines(trickle(line + b"\n", 100), max_line=1000)) == [line]


def test_memory_stays_bounded_on_a_huge_line() -> None:
    """A 64 MiB line with a 1 MiB limit never sits in memory whole."""
    stream = io.BufferedReader(Endless(64 * 1024 * 1024, b"\nnext\n"))
    tracemalloc.start()
    try:
        got = list(iter_lines(stream, max_line=1024 * 1024))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [line[: len(OVERSIZE)] == OVERSIZE for line in got] == [True, False]
    assert got[1] == b"next"
    assert peak < 8 * 1024 * 1024
