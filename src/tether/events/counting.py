"""Offline counting: read a harness's stream and fold it into a :class:`Ledger`.

This is the library behind ``tether events count``. It reads line by line with
:func:`tether.events.lines.iter_lines`, so a live pipe works as well as a file
of any size, and memory stays bounded by the longest line plus the tool calls
still open, never by the length of the stream.

Where a harness's stream cannot give exact iterations (``iteration_source ==
"session_file"``, e.g. Codex), the iterations come from the harness's own
session file when one is given; otherwise the ledger is marked as a bound.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import BinaryIO, Protocol

from tether.events.accounting import Ledger, TokenUsage, apply, stream_upper_bound
from tether.events.lines import iter_lines
from tether.events.model import AnyEvent

BOUND_NOTE = (
    "iterations is an upper bound (tool calls + assistant messages): this harness's "
    "stream has no event per model step. Pass its session file (--session) for the "
    "exact count."
)


class StreamReader(Protocol):
    """What counting needs of a harness adapter (``tether.harnesses.base.Harness`` has it)."""

    @property
    def iteration_source(self) -> str: ...

    def parse_line(self, line: bytes) -> list[AnyEvent]: ...

    def parse_session_line(self, line: bytes) -> list[AnyEvent]: ...


def fold_lines(
    ledger: Ledger, parse: Callable[[bytes], list[AnyEvent]], stream: BinaryIO
) -> Ledger:
    """Fold every event that ``parse`` finds in the lines of ``stream`` into ``ledger``."""
    for line in iter_lines(stream):
        for event in parse(line):
            apply(ledger, event)
    return ledger


def count_stream(
    harness: StreamReader,
    stream: BinaryIO,
    session_stream: BinaryIO | None = None,
) -> Ledger:
    """Count ``stream`` (the harness's stdout) into a fresh ledger.

    ``session_stream`` is the harness's own session file. It is read only when
    the harness needs it for exact iterations; for a harness whose stream is
    exact it is ignored. ``ledger.iteration_source`` says where the iteration
    count came from: ``"stream"``, ``"session_file"`` or ``"bound"``.
    """
    ledger = fold_lines(Ledger(), harness.parse_line, stream)

    if harness.iteration_source != "session_file":
        ledger.iteration_source = "stream"
        return ledger
    if session_stream is None:
        ledger.iteration_source = "bound"
        ledger.iterations = stream_upper_bound(ledger)
        return ledger

    session = fold_lines(Ledger(), harness.parse_session_line, session_stream)
    return merge_session(ledger, session)


def merge_session(ledger: Ledger, session: Ledger) -> Ledger:
    """Take what only the session file knows into the stream's ``ledger``.

    The iterations always; the session id, the run's end and the token usage
    where the stream has none (Vibe's stream names neither its end nor its usage).
    """
    ledger.iterations = session.iterations
    ledger.iteration_source = "session_file"
    if ledger.session_id is None:
        ledger.session_id = session.session_id
    if ledger.final_status is None and session.final_status is not None:
        ledger.final_status = session.final_status
        ledger.stop_reason = session.stop_reason
        ledger.final_message = session.final_message
    if ledger.usage == TokenUsage() and session.usage != TokenUsage():
        ledger.usage = session.usage
    return ledger


def note_for(ledger: Ledger) -> str | None:
    """The sentence that must accompany the count, if any."""
    return BOUND_NOTE if ledger.iteration_source == "bound" else None
