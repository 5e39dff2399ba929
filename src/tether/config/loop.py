"""The ``[loop]`` table: the board, TODO files, the guard, the four level-2 sources.

Every field has a default, so a project without ``[loop]`` works as it is: a
``tickets/`` board, ``TODO.md``, and for each level-2 role a built-in source
that every project has (``kind = "builtin"``, see ``tether.loop.builtin``): the
project's decision folder, the agents' memory files, the agents' own notes, the
person's recorded patterns. A source table only names what it changes; the
rest comes from that role's defaults (``source_defaults``); a table that names
a ``path`` or a ``command`` without a ``kind`` is a ``files`` or ``command``
source.
Durations are written ``"90s"``, ``"15m"``, ``"2h"``, ``"1d"`` (or ``"500ms"``).
"""

from __future__ import annotations

import re
from typing import Annotated

import msgspec

from tether.config.section import Command, NonEmptyStr, PositiveInt, Section

DURATION_PATTERN = r"^[0-9]+(\.[0-9]+)?(ms|s|m|h|d)$"
Duration = Annotated[str, msgspec.Meta(pattern=DURATION_PATTERN)]
Confidence = Annotated[float, msgspec.Meta(ge=0, le=1)]

ROLES = ("decisions.ledger", "memory.organic", "memory.curated", "user.model")
SourceKind = Annotated[str, msgspec.Meta(pattern=r"^(builtin|files|command)$")]

HOLD_WORDS = ("approval", "approve", "decision", "decide", "freigabe", "entscheidung")

_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_DURATION = re.compile(DURATION_PATTERN)


def parse_duration(text: str) -> float:
    """``"15m"`` -> 900.0 seconds; raises ValueError on anything else."""
    match = _DURATION.match(text.strip())
    if match is None:
        raise ValueError(f"{text!r} is not a duration; write it like 90s, 15m, 2h or 1d")
    unit = match.group(2)
    return float(text.strip()[: -len(unit)]) * _UNITS[unit]


class SourceSettings(msgspec.Struct, forbid_unknown_fields=True, kw_only=True, frozen=True):
    """One ``[loop.sources."ROLE"]`` table; a key left out takes the role's default."""

    kind: SourceKind | None = None
    path: NonEmptyStr | None = None  # files: a folder, relative to the project root
    command: Command | None = None  # command: argv, run without a shell
    # command: several argvs of one source, asked one after the other
    commands: list[Command] | None = None
    timeout: Duration | None = None
    # user.model: a pattern counts as found only at this confidence or above
    confidence_threshold: Confidence | None = None
    # a cheap command whose output joins the guard's fingerprint (for items: their
    # count not yet seen); memory.curated uses its first command unless this is set
    fingerprint_command: Command | None = None

    def argvs(self) -> list[list[str]]:
        """The commands to read, in order (``command`` or ``commands``)."""
        if self.command is not None:
            return [self.command]
        return list(self.commands or [])


class LoopSources(msgspec.Struct, forbid_unknown_fields=True, kw_only=True, frozen=True):
    """``[loop.sources]``: one table per role, named as the role is."""

    decisions_ledger: SourceSettings = msgspec.field(
        default_factory=SourceSettings, name="decisions.ledger"
    )
    memory_organic: SourceSettings = msgspec.field(
        default_factory=SourceSettings, name="memory.organic"
    )
    memory_curated: SourceSettings = msgspec.field(
        default_factory=SourceSettings, name="memory.curated"
    )
    user_model: SourceSettings = msgspec.field(default_factory=SourceSettings, name="user.model")

    def get(self, role: str) -> SourceSettings:
        value: SourceSettings = getattr(self, role.replace(".", "_"))
        return value


class RoutineCheck(msgspec.Struct, forbid_unknown_fields=True, kw_only=True, frozen=True):
    """One ``[[loop.routines]]`` entry: a maintenance command due after its cooldown."""

    name: Annotated[str, msgspec.Meta(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")]
    command: Command
    cooldown: Duration = "1d"
    lock: NonEmptyStr | None = None  # while this file exists the check is not due
    timeout: Duration | None = None


class LoopSettings(Section, frozen=True):
    """``[loop]``: what the evidence-based loop looks at and how long it waits."""

    board: NonEmptyStr = "tickets"
    todo_files: list[NonEmptyStr] = msgspec.field(default_factory=lambda: ["TODO.md"])
    # an open TODO item mentioning one of these words waits for a person
    todo_hold_words: list[NonEmptyStr] = msgspec.field(default_factory=lambda: list(HOLD_WORDS))
    guard_interval: Duration = "15m"
    check_timeout: Duration = "30s"  # a BLOCKED ticket's check command
    check_interval: Duration = "0s"  # re-run a failing check at most this often
    source_timeout: Duration = "20s"  # a command source, unless it sets its own
    profile: NonEmptyStr | None = None  # profile of dispatched runs (default profile if unset)
    follow_up_iterations: PositiveInt | None = None  # budget of a follow-up run
    # honour a planner's `budget` proposal in a ticket's front matter (off: never
    # does ticket content change a budget)
    ticket_budgets: bool = False
    max_attempts: PositiveInt = 3  # runs in a row without completing, then the unit goes to USER
    follow_up_manual_runs: bool = True  # follow up limit-stopped `tether run --unit` runs too
    max_ticks: PositiveInt = 50  # `tether loop run` without --max-ticks
    stop_hook_max_blocks: PositiveInt = 3
    sources: LoopSources = msgspec.field(default_factory=LoopSources)
    routines: list[RoutineCheck] = msgspec.field(default_factory=list)


# Each role's default: the built-in source every project has (tether.loop.builtin).
_ROLE_DEFAULTS: dict[str, SourceSettings] = {role: SourceSettings(kind="builtin") for role in ROLES}
DEFAULT_CONFIDENCE = 0.5


def source_defaults(role: str) -> SourceSettings:
    return _ROLE_DEFAULTS[role]


def effective_source(settings: LoopSettings, role: str) -> SourceSettings:
    """The role's table merged over its defaults (a key given wins).

    A table without ``kind`` that names a ``path`` is a ``files`` source, one
    that names ``command`` or ``commands`` a ``command`` source. (A command
    source without ``fingerprint_command`` shows the guard its first command:
    ``tether.loop.source_setup``.)
    """
    given = settings.sources.get(role)
    kind = given.kind
    if kind is None:
        if given.command is not None or given.commands is not None:
            kind = "command"
        elif given.path is not None:
            kind = "files"
    base = _ROLE_DEFAULTS[role]
    if kind is not None and kind != base.kind:
        # another kind: nothing of the default's location applies
        base = SourceSettings(kind=kind)
    merged = {
        name: getattr(given, name) if getattr(given, name) is not None else getattr(base, name)
        for name in SourceSettings.__struct_fields__
    }
    return SourceSettings(**merged)
