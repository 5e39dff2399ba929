"""The request log: one JSON line per HTTP request the scripted server received.

Each line is written and flushed as the request arrives, before the server
"thinks" and answers, so a request still in flight when a client is killed is
already on record. Fields:

``seq``, ``t`` (unix time), ``method``, ``path``, ``protocol`` (``responses``,
``chat``, ``anthropic`` or ``none``), ``model``, ``stream``, ``kind`` (``agent``
for a model call with tools offered, ``side`` for one without tools, ``other``
for anything else), ``step``, ``action`` (``tool_calls``, ``text``, ``none``),
``tool_calls`` (``[{"id", "name", "arguments"}]`` served), ``tool_names``
(offered, sorted), ``tools_offered``, ``tool_results_in_history`` (results the
client sent back), ``parallel_tool_calls``, ``input_tokens`` and
``output_tokens`` (the usage the answer reports, so a client's token and cost
counts can be checked against the log).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any


@dataclass(frozen=True)
class ServedCallRecord:
    id: str
    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RequestRecord:
    seq: int
    t: float
    method: str
    path: str
    protocol: str
    kind: str
    model: str | None = None
    stream: bool = False
    step: int | None = None
    action: str = "none"
    tool_calls: tuple[ServedCallRecord, ...] = ()
    tool_names: tuple[str, ...] = ()
    tools_offered: int = 0
    tool_results_in_history: int = 0
    parallel_tool_calls: bool | None = None
    input_tokens: int = 0
    output_tokens: int = 0

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["tool_calls"] = [asdict(c) for c in self.tool_calls]
        data["tool_names"] = list(self.tool_names)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RequestRecord:
        calls = tuple(
            ServedCallRecord(str(c.get("id", "")), str(c.get("name", "")), c.get("arguments", {}))
            for c in data.get("tool_calls", [])
            if isinstance(c, dict)
        )
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        known["tool_calls"] = calls
        known["tool_names"] = tuple(data.get("tool_names", ()))
        return cls(**known)


@dataclass(frozen=True)
class LogSummary:
    """What the model side saw, to compare with what a harness adapter counted."""

    model_calls: int
    tool_calls_served: int
    # the most tool results any request carried back (the whole history so far)
    tool_results_returned: int
    final_text_served: bool
    side_calls: int
    other_requests: int


def summarize(records: Iterable[RequestRecord]) -> LogSummary:
    model_calls = served = returned = side = other = 0
    final = False
    for r in records:
        if r.kind == "agent":
            model_calls += 1
            served += len(r.tool_calls)
            returned = max(returned, r.tool_results_in_history)
            final = final or r.action == "text"
        elif r.kind == "side":
            side += 1
        else:
            other += 1
    return LogSummary(model_calls, served, returned, final, side, other)


def read_log(path: Path | str) -> list[RequestRecord]:
    """Parse a request log written with ``--log`` (a torn last line is skipped)."""
    records: list[RequestRecord] = []
    with Path(path).open(encoding="utf-8") as fh:
        for line in fh:
            try:
                data = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(data, dict):
                records.append(RequestRecord.from_dict(data))
    return records


class RequestLog:
    """Thread-safe, in memory and (optionally) as JSONL in a file, flushed per line."""

    def __init__(self, path: Path | str | None = None) -> None:
        self._lock = threading.Lock()
        self._records: list[RequestRecord] = []
        self._fh: IO[str] | None = None
        if path is not None:
            self._fh = Path(path).open("a", encoding="utf-8")  # noqa: SIM115 - closed in close()

    def append(self, build: Callable[[int], RequestRecord]) -> RequestRecord:
        """Add the record ``build(seq)`` makes; seq numbers follow arrival order."""
        with self._lock:
            record = build(len(self._records) + 1)
            self._records.append(record)
            if self._fh is not None:
                self._fh.write(json.dumps(record.to_dict(), separators=(",", ":")) + "\n")
                self._fh.flush()
            return record

    @property
    def records(self) -> list[RequestRecord]:
        with self._lock:
            return list(self._records)

    def close(self) -> None:
        with self._lock:
            if self._fh is not None:
                self._fh.close()
                self._fh = None
