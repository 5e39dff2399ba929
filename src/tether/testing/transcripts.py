"""Recorded transcripts and what they must count to.

A transcript is a harness's stdout saved as ``<name>.jsonl`` (or
``<name>.jsonl.gz``) next to ``<name>.expected.json``. The expected file needs
four keys, the ground truth of the recording::

    {"iterations": 5, "tool_calls": 5, "tool_results": 5, "session_id": "…"}

and may add ``open_tool_calls`` (default: calls minus results),
``malformed_lines``, ``unknown_lines``, ``final_status`` (each checked only when
present), ``harness`` (default: the folder name) and ``files`` with ``stream``
and ``session`` paths relative to the expected file (the session file is the
harness's own log, needed where the stream alone cannot count iterations).

Usage from a test::

    from tether.testing.transcripts import count_transcript, find_transcripts

    for t in find_transcripts(Path("tests/transcripts"), "codex"):
        ledger = count_transcript(get_harness("codex"), t)
        assert ledger.iterations == t.expected.iterations
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator, Mapping
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from tether.events.accounting import Ledger
from tether.events.counting import count_stream
from tether.events.lines import iter_lines
from tether.harnesses.base import Harness

EXPECTED_SUFFIX = ".expected.json"


class TranscriptError(ValueError):
    """An expected file that cannot be used, with the file and the reason."""


@dataclass(frozen=True)
class Expected:
    iterations: int
    tool_calls: int
    tool_results: int
    session_id: str | None
    open_tool_calls: int
    malformed_lines: int | None = None
    unknown_lines: int | None = None
    # Checked only when the expected file names it (``None`` is a valid value).
    final_status: str | None = None
    checks_final_status: bool = False


@dataclass(frozen=True)
class Transcript:
    harness: str
    name: str
    stream: Path
    session: Path | None
    expected: Expected
    raw: Mapping[str, Any] = field(repr=False)

    @property
    def id(self) -> str:
        return f"{self.harness}/{self.name}"

    def open_stream(self) -> BinaryIO:
        return _open(self.stream)

    def open_session(self) -> BinaryIO | None:
        return _open(self.session) if self.session is not None else None

    def lines(self) -> Iterator[bytes]:
        """The stream's lines, framed exactly as the supervisor frames them."""
        with self.open_stream() as stream:
            yield from iter_lines(stream)


def _open(path: Path) -> BinaryIO:
    if path.name.endswith(".gz"):
        return gzip.open(path, "rb")  # type: ignore[return-value]
    return path.open("rb")


def load_transcript(
    expected_path: Path, harness: str | None = None, *, prefix: str = ""
) -> Transcript:
    """Read one ``<name>.expected.json`` and locate its stream and session files.

    ``prefix`` is put before the name (``"broken/"`` gives ``broken/noise``).
    """
    try:
        raw = json.loads(expected_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise TranscriptError(f"{expected_path}: cannot read: {exc}") from exc
    if not isinstance(raw, dict):
        raise TranscriptError(f"{expected_path}: expected a JSON object")
    folder = expected_path.parent
    name = expected_path.name[: -len(EXPECTED_SUFFIX)]
    given = raw.get("files")
    files: dict[str, Any] = given if isinstance(given, dict) else {}
    stream = _stream_path(folder, name, files.get("stream"))
    if stream is None:
        raise TranscriptError(f"{expected_path}: no {name}.jsonl or {name}.jsonl.gz beside it")
    session_name = files.get("session")
    session = folder / session_name if isinstance(session_name, str) else None
    if session is not None and not session.is_file():
        session = None
    return Transcript(
        harness=harness or str(raw.get("harness") or folder.name),
        name=prefix + name,
        stream=stream,
        session=session,
        expected=_expected(raw, expected_path),
        raw=raw,
    )


def _stream_path(folder: Path, name: str, given: object) -> Path | None:
    candidates = [folder / given] if isinstance(given, str) else []
    candidates += [folder / f"{name}.jsonl", folder / f"{name}.jsonl.gz"]
    return next((p for p in candidates if p.is_file()), None)


def _expected(raw: Mapping[str, Any], path: Path) -> Expected:
    counts: dict[str, int] = {}
    for key in ("iterations", "tool_calls", "tool_results"):
        value = raw.get(key)
        if not isinstance(value, int) or isinstance(value, bool):
            raise TranscriptError(f"{path}: {key!r} must be an integer, got {value!r}")
        counts[key] = value
    if "session_id" not in raw:
        raise TranscriptError(f"{path}: 'session_id' is missing (use null when none)")
    session_id = raw["session_id"]
    if session_id is not None and not isinstance(session_id, str):
        raise TranscriptError(f"{path}: 'session_id' must be a string or null")
    open_calls = raw.get("open_tool_calls", counts["tool_calls"] - counts["tool_results"])
    return Expected(
        iterations=counts["iterations"],
        tool_calls=counts["tool_calls"],
        tool_results=counts["tool_results"],
        session_id=session_id,
        open_tool_calls=int(open_calls),
        malformed_lines=_optional_int(raw, "malformed_lines"),
        unknown_lines=_optional_int(raw, "unknown_lines"),
        final_status=raw.get("final_status"),
        checks_final_status="final_status" in raw,
    )


def _optional_int(raw: Mapping[str, Any], key: str) -> int | None:
    value = raw.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def find_transcripts(
    root: Path, harness: str | None = None, *, subfolder: str | None = None
) -> list[Transcript]:
    """Every transcript under ``root/<harness>/`` (or ``root/<harness>/<subfolder>/``).

    Without ``harness``, ``root`` itself is the folder. Sorted by name, so test
    ids are stable.
    """
    folder = root / harness if harness else root
    if subfolder:
        folder = folder / subfolder
    if not folder.is_dir():
        return []
    prefix = f"{subfolder}/" if subfolder else ""
    paths = sorted(folder.glob(f"*{EXPECTED_SUFFIX}"))
    return [load_transcript(path, harness, prefix=prefix) for path in paths]


def count_transcript(harness: Harness, transcript: Transcript) -> Ledger:
    """The ledger of ``transcript``, with the session file where the harness needs it."""
    with ExitStack() as stack:
        stream = stack.enter_context(transcript.open_stream())
        session = transcript.open_session()
        if session is not None:
            stack.enter_context(session)
        return count_stream(harness, stream, session)
