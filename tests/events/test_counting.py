"""count_stream: the library behind ``tether events count``."""

from __future__ import annotations

import io
import json
import tracemalloc
from collections.abc import Mapping
from pathlib import Path
from typing import Any, BinaryIO, ClassVar

import msgspec
import pytest

from tether.events.accounting import Ledger
from tether.events.counting import BOUND_NOTE, count_stream, note_for
from tether.events.model import (
    AnyEvent,
    SessionStarted,
    StepStarted,
    ToolCallStarted,
    ToolResult,
    malformed,
    unknown,
)
from tether.harnesses import get_harness
from tether.harnesses.base import IterationSource, RunSpec
from tether.harnesses.claude_code import ClaudeCodeHarness

TRANSCRIPTS = Path(__file__).parents[1] / "transcripts"
CLAUDE = TRANSCRIPTS / "claude-code"


def _expected(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data


class _Line(msgspec.Struct):
    t: str = ""
    id: str | None = None


class SessionFileHarness:
    """A tiny adapter whose stream gives tool calls and whose session file gives steps.

    Stream lines: ``{"t":"start","id":S}``, ``{"t":"call","id":C}``, ``{"t":"result","id":C}``.
    Session lines: ``{"t":"step","id":R}`` (one per completed model response).
    """

    name: ClassVar[str] = "session-file-test"
    executable: ClassVar[str] = "true"
    iteration_source: ClassVar[IterationSource] = "session_file"
    accepts_session_id: ClassVar[bool] = False
    has_turn_cap: ClassVar[bool] = False

    def build_command(self, spec: RunSpec) -> list[str]:
        return [self.executable]

    def parse_line(self, line: bytes) -> list[AnyEvent]:
        try:
            obj = msgspec.json.decode(line, type=_Line)
        except msgspec.DecodeError as exc:
            return [malformed(line, str(exc))]
        if obj.t == "start" and obj.id:
            return [SessionStarted(session_id=obj.id)]
        if obj.t == "call" and obj.id:
            # the stream's only hint of a step: one per call, so at most a bound
            return [StepStarted(message_id=None), ToolCallStarted(call_id=obj.id, name="sh")]
        if obj.t == "result" and obj.id:
            return [ToolResult(call_id=obj.id)]
        return [unknown(line, obj.t)]

    def parse_session_line(self, line: bytes) -> list[AnyEvent]:
        try:
            obj = msgspec.json.decode(line, type=_Line)
        except msgspec.DecodeError:
            return []
        if obj.t == "session" and obj.id:
            return [SessionStarted(session_id=obj.id)]
        if obj.t == "step":
            return [StepStarted(message_id=obj.id)]
        return []

    def session_file(self, session_id: str, env: Mapping[str, str]) -> Path | None:
        return None


def _jsonl(*objs: dict[str, Any]) -> bytes:
    return b"".join(json.dumps(o).encode() + b"\n" for o in objs)


# Two responses: the first asks for two calls at once, the second for one.
SESSION_STREAM = _jsonl(
    {"t": "start", "id": "thread-1"},
    {"t": "call", "id": "c1"},
    {"t": "result", "id": "c1"},
    {"t": "call", "id": "c2"},
    {"t": "result", "id": "c2"},
    {"t": "call", "id": "c3"},
    {"t": "result", "id": "c3"},
)
SESSION_FILE = _jsonl(
    {"t": "session", "id": "thread-1"},
    {"t": "step", "id": "resp-1"},
    {"t": "noise"},
    {"t": "step", "id": "resp-2"},
)


@pytest.mark.parametrize("scenario", ["five-steps", "forever"])
def test_claude_code_transcripts_equal_expected(scenario: str) -> None:
    expected = _expected(CLAUDE / f"{scenario}.expected.json")
    with (CLAUDE / f"{scenario}.jsonl").open("rb") as stream:
        ledger = count_stream(ClaudeCodeHarness(), stream)
    assert ledger.iterations == expected["iterations"]
    assert ledger.tool_calls == expected["tool_calls"]
    assert ledger.tool_results == expected["tool_results"]
    assert ledger.open_tool_calls == expected["tool_calls"] - expected["tool_results"]
    assert ledger.session_id == expected["session_id"]
    assert ledger.malformed_lines == 0
    assert ledger.unknown_lines == 0
    assert ledger.iteration_source == "stream"
    assert note_for(ledger) is None


def test_five_steps_pinned_counts() -> None:
    with (CLAUDE / "five-steps.jsonl").open("rb") as stream:
        ledger = count_stream(get_harness("claude-code"), stream)
    assert (ledger.iterations, ledger.tool_calls, ledger.tool_results) == (5, 5, 5)
    assert ledger.final_status == "success"
    assert ledger.to_dict()["iterations_exact"] is True


def test_stream_harness_ignores_a_session_file() -> None:
    with (CLAUDE / "five-steps.jsonl").open("rb") as stream:
        ledger = count_stream(ClaudeCodeHarness(), stream, io.BytesIO(b'{"anything": 1}\n' * 50))
    assert ledger.iterations == 5
    assert ledger.iteration_source == "stream"


def test_session_file_gives_exact_iterations() -> None:
    ledger = count_stream(
        SessionFileHarness(), io.BytesIO(SESSION_STREAM), io.BytesIO(SESSION_FILE)
    )
    assert ledger.iterations == 2
    assert ledger.iteration_source == "session_file"
    assert ledger.to_dict()["iterations_exact"] is True
    assert (ledger.tool_calls, ledger.tool_results, ledger.open_tool_calls) == (3, 3, 0)
    assert ledger.session_id == "thread-1"
    assert note_for(ledger) is None


def test_without_session_file_the_count_is_a_bound() -> None:
    ledger = count_stream(SessionFileHarness(), io.BytesIO(SESSION_STREAM))
    assert ledger.iterations == 3  # one per call: more than the 2 real responses
    assert ledger.iteration_source == "bound"
    assert ledger.to_dict()["iterations_exact"] is False
    assert note_for(ledger) == BOUND_NOTE


def test_session_id_falls_back_to_the_session_file() -> None:
    stream = _jsonl({"t": "call", "id": "c1"})
    ledger = count_stream(SessionFileHarness(), io.BytesIO(stream), io.BytesIO(SESSION_FILE))
    assert ledger.session_id == "thread-1"
    assert ledger.open_tool_calls == 1


def test_broken_stream_is_counted_not_fatal() -> None:
    lines = (CLAUDE / "five-steps.jsonl").read_bytes().splitlines(keepends=True)
    noise = b"npm WARN something went sideways\n"
    strange = b'{"type":"brand_new_event","x":1}\n'
    # the last line (the result) cut in the middle, with no newline
    broken = b"".join([lines[0], noise, strange, *lines[1:-1], lines[-1][:40]])
    ledger = count_stream(ClaudeCodeHarness(), io.BytesIO(broken))
    assert ledger.malformed_lines == 2  # the noise and the truncated result
    assert ledger.unknown_lines == 1
    assert (ledger.iterations, ledger.tool_calls, ledger.tool_results) == (5, 5, 5)
    assert ledger.final_status is None


def test_a_call_whose_result_never_comes_stays_open() -> None:
    lines = [
        line
        for line in (CLAUDE / "five-steps.jsonl").read_bytes().splitlines(keepends=True)
        if b'"type":"user"' not in line
    ]
    ledger = count_stream(ClaudeCodeHarness(), io.BytesIO(b"".join(lines)))
    assert ledger.tool_calls == 5
    assert ledger.tool_results == 0
    assert ledger.open_tool_calls == 5


def test_a_10_mb_line_is_read_whole() -> None:
    text = "x" * (10 * 1024 * 1024)
    line = json.dumps(
        {
            "type": "assistant",
            "message": {"id": "msg_big", "content": [{"type": "text", "text": text}]},
        }
    ).encode()
    ledger = count_stream(ClaudeCodeHarness(), io.BytesIO(line + b"\n" + line))
    assert ledger.iterations == 1
    assert ledger.last_assistant_text == text
    assert ledger.malformed_lines == 0


class _Trickle(io.RawIOBase):
    """A pipe-like reader: at most ``size`` bytes per read, cutting lines anywhere."""

    def __init__(self, data: bytes, size: int) -> None:
        self._data = memoryview(data)
        self._pos = 0
        self._size = size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        n = min(self._size, len(buffer), len(self._data) - self._pos)
        buffer[:n] = self._data[self._pos : self._pos + n]
        self._pos += n
        return n


@pytest.mark.parametrize("size", [1, 7, 4096])
def test_partial_reads_give_the_same_ledger(size: int) -> None:
    data = (CLAUDE / "forever.jsonl").read_bytes()
    whole = count_stream(ClaudeCodeHarness(), io.BytesIO(data)).to_dict()
    trickled = count_stream(ClaudeCodeHarness(), _Trickle(data, size)).to_dict()  # type: ignore[arg-type]
    assert trickled == whole


class _Repeat(io.RawIOBase):
    """``times`` copies of ``data``, produced on demand (never held whole)."""

    def __init__(self, data: bytes, times: int) -> None:
        self._data = data
        self._left = times
        self._pos = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self._left == 0:
            return 0
        n = min(len(buffer), len(self._data) - self._pos)
        buffer[:n] = self._data[self._pos : self._pos + n]
        self._pos += n
        if self._pos == len(self._data):
            self._pos = 0
            self._left -= 1
        return n


def _peak_bytes(stream: BinaryIO) -> tuple[Ledger, int]:
    tracemalloc.start()
    try:
        ledger = count_stream(ClaudeCodeHarness(), stream)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return ledger, peak


def test_memory_does_not_grow_with_the_stream() -> None:
    block = (CLAUDE / "forever.jsonl").read_bytes()  # ~77 kB, 127 lines
    small, small_peak = _peak_bytes(io.BufferedReader(_Repeat(block, 10), 1 << 20))
    large, large_peak = _peak_bytes(io.BufferedReader(_Repeat(block, 200), 1 << 20))
    assert large.events == small.events * 20
    # ~15 MB streamed through; what is held stays that of one chunk and one ledger
    assert large_peak < 4 * 1024 * 1024
    assert large_peak < small_peak + 512 * 1024
