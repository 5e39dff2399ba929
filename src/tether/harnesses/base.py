"""What every harness adapter provides (line framing: ``tether.events.lines``).

An adapter is pure: it builds an argv and parses lines. It never spawns a
process (``tether.runs.process`` does) and never raises on bad input.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, Literal, Protocol, TypeVar, runtime_checkable

import msgspec

from tether.events.lines import oversize_event
from tether.events.model import AnyEvent, malformed, unknown

IterationSource = Literal["stream", "session_file"]
T = TypeVar("T")


@dataclass(frozen=True)
class ToolAllowance:
    """The only tool calls a run may make, for the harness's own allow-list.

    A second belt behind the gate (a room's run: ``tether.room.room``): each
    adapter turns it into its CLI's own flags, as far as that CLI can say it
    (docs/how-to/room.md lists what each harness enforces).
    """

    # argv prefixes a shell call may start with, e.g. ("tether", "wiki", "read")
    commands: tuple[tuple[str, ...], ...]
    # the one file the harness's write tool may write (None: no write tool)
    write_file: Path | None = None


@dataclass(frozen=True)
class RunSpec:
    """What a supervised run asks of a harness."""

    prompt: str
    model: str | None = None
    extra_args: tuple[str, ...] = ()
    # A session id chosen by tether, passed where the harness accepts one.
    session_id: str | None = None
    # The harness's own turn cap, as a second belt behind tether's own stop.
    max_turns: int | None = None
    # The harness's own token, cost and wall-clock belts, where it has them (Vibe
    # --max-tokens/--max-price, Claude Code --max-budget-usd); others ignore them.
    max_tokens: int | None = None
    max_cost_usd: float | None = None
    time_limit_seconds: float | None = None
    # A per-run settings/hooks file the harness should load (Claude Code --settings).
    settings_path: Path | None = None
    cwd: Path | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    # Only these tool calls, by the harness's own allow-list (None: the harness's defaults).
    allow: ToolAllowance | None = None


@runtime_checkable
class Harness(Protocol):
    """The adapter contract. See docs/reference/events.md."""

    name: ClassVar[str]
    executable: ClassVar[str]
    # Where exact iteration counts come from.
    iteration_source: ClassVar[IterationSource]
    # The flag that fixes the session id up front, if the harness has one.
    accepts_session_id: ClassVar[bool]
    # Whether build_command can pass a turn cap.
    has_turn_cap: ClassVar[bool]

    def build_command(self, spec: RunSpec) -> list[str]:
        """The argv (never a shell string, never a resume flag)."""
        ...

    def parse_line(self, line: bytes) -> list[AnyEvent]:
        """Events in one stream line; total: bad input becomes Malformed/UnknownLine."""
        ...

    def parse_session_line(self, line: bytes) -> list[AnyEvent]:
        """Events in one line of the harness's own session file (empty if unused)."""
        ...

    def session_file(self, session_id: str, env: Mapping[str, str]) -> Path | None:
        """Where the harness writes its own session log for ``session_id``, if known."""
        ...


def home_dir(env: Mapping[str, str]) -> Path:
    home = env.get("HOME")
    return Path(home) if home else Path.home()


def decode_line(decoder: msgspec.json.Decoder[T], line: bytes) -> T | list[AnyEvent]:
    """One stream line decoded, or the events that record why it could not be.

    Every adapter starts its ``parse_line`` here, so the rules are one: a line the
    framing cut is malformed, a blank line is nothing, bad JSON (or bad UTF-8, or
    nesting too deep) is malformed, JSON of an unexpected shape is unknown.
    """
    cut = oversize_event(line)
    if cut is not None:
        return [cut]
    if not line.strip():
        return []
    try:
        return decoder.decode(line)
    except msgspec.ValidationError as exc:
        return [unknown(line, f"unexpected shape: {exc}")]
    except (ValueError, RecursionError) as exc:  # bad JSON, bad UTF-8, too deep
        return [malformed(line, str(exc) or type(exc).__name__)]


def bind(harness: Harness, spec: RunSpec) -> Harness:
    """The adapter for one run's argv: a harness may specialise itself (``bind``).

    The scripted harness does: its ``--format`` decides which real harness's
    stream it prints, so which adapter reads it.
    """
    specialise = getattr(harness, "bind", None)
    if callable(specialise):
        bound: Harness = specialise(spec)
        return bound
    return harness
