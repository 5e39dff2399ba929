"""A run's timeline and burn-down series, read once, then only what the run appended.

A long run's ``events.jsonl`` can be tens of megabytes; parsing it again on
every update of its page would cost seconds each time. A ``Tail`` keeps the
parser, the running counts and the byte offset of the last complete line, so
the next look parses only the new lines. The timeline keeps the *latest*
``TIMELINE_MAX`` entries (with the total), and the series sent to the page are
downsampled to at most ``SERIES_POINTS`` points (first and last exact).
"""

from __future__ import annotations

import io
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

TIMELINE_MAX = 2000
SERIES_POINTS = 600
CACHED_RUNS = 8
SERIES = ("iterations", "tool_calls", "tokens")
TIMELINE_KINDS = frozenset(
    {"step_started", "tool_call_started", "tool_result", "permission_requested"}
)


@dataclass
class Tail:
    """What a run's events file said up to ``offset`` (a line boundary)."""

    identity: tuple[str, int]  # the file's path and inode: a new file starts over
    adapter: Any
    ledger: Any
    offset: int = 0
    events: int = 0
    timeline: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=TIMELINE_MAX))
    timeline_total: int = 0
    series: dict[str, list[float]] = field(
        default_factory=lambda: {"event": [], **{name: [] for name in SERIES}}
    )

    def catch_up(self, path: Path) -> None:
        """Parse the complete lines written since the last look."""
        from tether.events.accounting import apply
        from tether.events.lines import iter_lines

        with path.open("rb") as handle:
            handle.seek(self.offset)
            data = handle.read()
        end = data.rfind(b"\n") + 1  # a line still being written waits for its newline
        if end == 0:
            return
        self.offset += end
        for line in iter_lines(io.BytesIO(data[:end])):
            for event in self.adapter.parse_line(line):
                self.events += 1
                apply(self.ledger, event)
                self._record(event)

    def _record(self, event: Any) -> None:
        ledger = self.ledger
        if event.kind in TIMELINE_KINDS:
            self.timeline_total += 1
            entry: dict[str, Any] = {
                "n": self.events,
                "kind": event.kind,
                "step": ledger.iterations,
            }
            for name in ("name", "call_id", "is_error", "tool_name"):
                value = getattr(event, name, None)
                if value is not None:
                    entry[name] = value
            self.timeline.append(entry)
        usage = ledger.usage
        tokens = (
            usage.input_tokens
            + usage.output_tokens
            + usage.cache_read_tokens
            + usage.cache_write_tokens
        )
        self.series["event"].append(self.events)
        self.series["iterations"].append(ledger.iterations)
        self.series["tool_calls"].append(ledger.tool_calls)
        self.series["tokens"].append(tokens)


class Tails:
    """The tails of the last few runs looked at (least recently used goes first)."""

    def __init__(self, keep: int = CACHED_RUNS) -> None:
        self.keep = keep
        self.tails: OrderedDict[str, Tail] = OrderedDict()

    def of(self, row: Any) -> Tail | None:
        """The run's tail, caught up with its file; None when it has no events file."""
        from tether.events.accounting import Ledger
        from tether.runs.record import RunPaths
        from tether.runs.recovery import event_adapter

        path = RunPaths(Path(row.run_dir)).events
        try:
            info = path.stat()
        except OSError:
            self.tails.pop(row.id, None)
            return None
        identity = (str(path), info.st_ino)
        tail = self.tails.get(row.id)
        if tail is None or tail.identity != identity or info.st_size < tail.offset:
            tail = Tail(identity, event_adapter(row), Ledger())
        self.tails[row.id] = tail
        self.tails.move_to_end(row.id)
        while len(self.tails) > self.keep:
            self.tails.popitem(last=False)
        if info.st_size > tail.offset:
            tail.catch_up(path)
        return tail


def downsample(series: dict[str, list[float]], points: int = SERIES_POINTS) -> dict[str, Any]:
    """At most ``points`` samples of every series, evenly spread, first and last exact."""
    count = len(series["event"])
    picked: list[int] | range
    if count <= points:
        picked = range(count)
    else:
        step = (count - 1) / (points - 1)
        picked = sorted({round(i * step) for i in range(points)})
    out: dict[str, Any] = {name: [values[i] for i in picked] for name, values in series.items()}
    out["total_events"] = count
    return out


def file_stamp(path: Path) -> tuple[int, int] | None:
    """A file's size and modification time, for a page's version; None when missing."""
    try:
        info = path.stat()
    except OSError:
        return None
    return info.st_size, info.st_mtime_ns
