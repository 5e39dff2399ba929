"""The shape of ``tether.toml``: one msgspec struct per table, defaults included.

Adding a section (``[loop]``, ``[board]``, ...) is one struct: subclass
``Section``, give every field a default, list its environment variables in
``env_vars``, and register it in ``SECTIONS``. Files, environment and flags are
then validated, layered and reported (``tether config show``) with no other
change; read it back with ``Config.section("loop")``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Annotated, Any, ClassVar

import msgspec

from tether.config.autonomy_rules import PolicySettings
from tether.config.loop import LoopSettings
from tether.config.mcp import McpSettings
from tether.config.outbox import OutboxSettings
from tether.config.section import (
    Command,
    NonEmptyStr,
    NonNegativeFloat,
    PositiveFloat,
    PositiveInt,
    Section,
)
from tether.core.project import DEFAULT_CALL_BUDGET

PROFILE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


# events.jsonl of one run stops growing here unless configured otherwise.
DEFAULT_EVENTS_MAX_BYTES = 256 * 1024 * 1024
# stderr.log of one run likewise (an agent's diagnostics, never its work)
DEFAULT_STDERR_MAX_BYTES = 8 * 1024 * 1024


class Settings(Section, frozen=True):
    """The top-level keys of ``tether.toml``."""

    home: NonEmptyStr | None = None
    iteration_limit: PositiveInt = 20
    max_iterations_cap: PositiveInt = 200
    tool_call_limit: PositiveInt | None = None
    timeout_seconds: PositiveFloat = 3600.0
    kill_grace_seconds: NonNegativeFloat = 3.0
    gate_budget: PositiveInt = DEFAULT_CALL_BUDGET
    # spending budgets of a run (input + output tokens; USD where the harness reports cost)
    token_limit: PositiveInt | None = None
    cost_limit_usd: PositiveFloat | None = None
    # caps no flag or profile may go above (None: no cap)
    max_tokens_cap: PositiveInt | None = None
    max_cost_cap_usd: PositiveFloat | None = None
    # events.jsonl of one run stops growing here: the run ends as output_limit
    events_max_bytes: PositiveInt = DEFAULT_EVENTS_MAX_BYTES
    # stderr.log of one run stops growing here: the run ends as output_limit too
    stderr_max_bytes: PositiveInt = DEFAULT_STDERR_MAX_BYTES

    env_vars: ClassVar[Mapping[str, str]] = {
        "home": "TETHER_HOME",
        "iteration_limit": "TETHER_ITERATION_LIMIT",
        "max_iterations_cap": "TETHER_MAX_ITERATIONS_CAP",
        "tool_call_limit": "TETHER_TOOL_CALL_LIMIT",
        "timeout_seconds": "TETHER_TIMEOUT",
        "gate_budget": "TETHER_GATE_BUDGET",
        "token_limit": "TETHER_TOKEN_LIMIT",
        "cost_limit_usd": "TETHER_COST_LIMIT",
        "events_max_bytes": "TETHER_EVENTS_MAX_BYTES",
        "stderr_max_bytes": "TETHER_STDERR_MAX_BYTES",
    }


class WatchSettings(Section, frozen=True):
    """``[watch]``: the orchestrator watchdog (docs/reference/watch.md)."""

    interval: PositiveFloat = 30.0
    idle_threshold: PositiveFloat = 45.0
    wake_min_interval: NonNegativeFloat = 60.0
    confirm_after: NonNegativeFloat = 5.0
    busy_veto_max: PositiveFloat = 600.0
    startup_grace: NonNegativeFloat = 300.0
    subagents_folders: list[NonEmptyStr] = msgspec.field(default_factory=list)
    # which panes hold subagents: the orchestrators' own tmux sessions, the whole
    # tmux server, or only subagents_folders (docs/reference/watch.md)
    subagents_scope: Annotated[str, msgspec.Meta(pattern="^(session|server|folders)$")] = "session"
    tmux_socket: NonEmptyStr | None = None
    wake_prefer: Annotated[str, msgspec.Meta(pattern="^(harness|tmux)$")] = "harness"
    wake_command: list[NonEmptyStr] = msgspec.field(default_factory=list)
    notify: bool = True
    # an argv run for the person on every wake and "orchestrator gone" (a chat webhook script)
    notify_command: list[NonEmptyStr] = msgspec.field(default_factory=list)
    message_max_chars: Annotated[int, msgspec.Meta(ge=80)] = 600
    ack_timeout: PositiveFloat = 10.0


# Languages with built-in ingest end lines (tether.ingest.lines; a test keeps the two equal).
END_LINE_LANGUAGES = ("de", "en", "vi")
END_LINE_KEYS = ("entries_line", "bundles_line")


class EmbeddingsSettings(msgspec.Struct, forbid_unknown_fields=True, kw_only=True, frozen=True):
    """``[wiki] embeddings = {url, model}``: an OpenAI-compatible embeddings endpoint for the
    room brief (docs/reference/wiki.md); the offline models stay the fallback."""

    url: Annotated[str, msgspec.Meta(pattern=r"^https?://[^\s/]+")]
    model: NonEmptyStr
    # the environment variable that holds the key, for a server that wants one
    key_env: Annotated[str, msgspec.Meta(pattern=f"^{ENV_NAME.pattern}$")] | None = None
    timeout: PositiveFloat = 30.0


class WikiSettings(Section, frozen=True):
    """``[wiki]``: the wiki, its ingest queue and the room (docs/reference/wiki.md)."""

    root: NonEmptyStr | None = None
    room_budget: PositiveInt = 12
    room_profile: NonEmptyStr | None = None
    ingest_profile: NonEmptyStr | None = None
    language: NonEmptyStr = "en"
    entries_line: NonEmptyStr | None = None
    bundles_line: NonEmptyStr | None = None
    # pages larger than this are not indexed (tether.wiki.index_schema.MAX_PAGE_BYTES, 4 MiB)
    max_page_bytes: PositiveInt = 4 * 1024 * 1024
    # an embeddings endpoint the brief asks first (None: the offline models only)
    embeddings: EmbeddingsSettings | None = None

    env_vars: ClassVar[Mapping[str, str]] = {
        "root": "TETHER_WIKI_ROOT",
        "room_budget": "TETHER_ROOM_BUDGET",
    }

    def __post_init__(self) -> None:
        # The end lines are checked when the file is read, so that `ingest end`
        # never finds out only after it has moved the entry.
        for name in END_LINE_KEYS:
            template = getattr(self, name)
            if template is not None and "{n}" not in template:
                raise ValueError(
                    f"`wiki.{name}` = {describe_value(template)} has no {{n}} (where the "
                    f"number of waiting units goes)"
                )
        missing = [name for name in END_LINE_KEYS if getattr(self, name) is None]
        if self.language not in END_LINE_LANGUAGES and missing:
            raise ValueError(
                f"`wiki.language` = {describe_value(self.language)} has no built-in end lines "
                f"(known: {', '.join(END_LINE_LANGUAGES)}); for another language set "
                f"{' and '.join(f'`wiki.{m}`' for m in missing)} (with {{n}}) in the same file"
            )


class FleetSettings(Section, frozen=True):
    """``[fleet]``: many projects' loops on shared workers (docs/reference/fleet.md)."""

    # postgresql://… for a fleet over several machines; unset: SQLite under the home
    database: NonEmptyStr | None = None
    # the projects' tether homes (runs, guard, reports); unset: <home>/fleet/projects
    state_dir: NonEmptyStr | None = None
    # where workers clone the projects; unset: <home>/fleet/work
    workdir: NonEmptyStr | None = None
    poll_interval: PositiveFloat = 300.0  # after a STOP, the project's next tick
    heartbeat_interval: PositiveFloat = 2.0  # how often a worker renews its lease
    # a worker's lease (database server's clock): its units are taken over only once it
    # ran out, and the worker stops its agents shortly before that if it cannot renew
    dead_after: PositiveFloat = 45.0

    env_vars: ClassVar[Mapping[str, str]] = {"database": "TETHER_FLEET_DATABASE"}


class SandboxSettings(Section, frozen=True):
    """``[sandbox]``: the sandbox every agent run starts in (docs/reference/sandbox.md)."""

    # "on": every run sandboxed, or refused when no sandbox can start; "off": none
    mode: Annotated[str, msgspec.Meta(pattern="^(on|off)$")] = "on"
    # hosts the agent may reach besides its model's (host, host:port, *.domain)
    allow_hosts: list[NonEmptyStr] = msgspec.field(default_factory=list)
    # folders and files that are empty inside, besides the built-in secrets (~ allowed)
    hide: list[NonEmptyStr] = msgspec.field(default_factory=list)

    env_vars: ClassVar[Mapping[str, str]] = {"mode": "TETHER_SANDBOX"}

    def __post_init__(self) -> None:
        if not self.allow_hosts:
            return  # every configuration is read at every start; most name no host
        from tether.sandbox.hosts import HostError, parse_host

        for index, entry in enumerate(self.allow_hosts):
            try:
                parse_host(entry)
            except HostError as exc:
                raise ValueError(f"`sandbox.allow_hosts[{index}]`: {exc}") from None


# table name -> its struct; "" is the top level. Register new sections here.
SECTIONS: dict[str, type[Section]] = {
    "": Settings,
    "watch": WatchSettings,
    "wiki": WikiSettings,
    "loop": LoopSettings,
    "policy": PolicySettings,
    "fleet": FleetSettings,
    "mcp": McpSettings,
    "outbox": OutboxSettings,
    "sandbox": SandboxSettings,
}

# A table that is not a section: named entries, each its own struct.
PROFILES_TABLE = "profiles"


class ProfileSchema(msgspec.Struct, forbid_unknown_fields=True, kw_only=True, frozen=True):
    """One ``[profiles.NAME]`` table."""

    harness: NonEmptyStr
    model: NonEmptyStr | None = None
    args: list[str] = []
    env: dict[str, str] = {}
    iteration_limit: PositiveInt | None = None
    tool_call_limit: PositiveInt | None = None
    timeout_seconds: PositiveFloat | None = None
    token_limit: PositiveInt | None = None
    cost_limit_usd: PositiveFloat | None = None
    default: bool = False
    strength: PositiveInt = 1
    post_run: list[Command] = []


def field_names(struct: type[msgspec.Struct]) -> tuple[str, ...]:
    return struct.__struct_fields__


def setting_key(section: str, name: str) -> str:
    """The dotted key of a setting as it appears in sources and messages."""
    return f"{section}.{name}" if section else name


# --- turning msgspec's messages into ones that name the key -------------------

_UNKNOWN = re.compile(r"Object contains unknown field `(?P<name>[^`]+)`(?: - at `(?P<at>[^`]+)`)?$")
_MISSING = re.compile(r"Object missing required field `(?P<name>[^`]+)`(?: - at `(?P<at>[^`]+)`)?$")
_EXPECTED = re.compile(
    r"Expected `(?P<type>[^`]+)`(?P<rest>.*?)(?:, got `(?P<got>[^`]+)`)?(?: - at `(?P<at>[^`]+)`)?$"
)
_PATH_PART = re.compile(r"\.([^.\[]+)|\[(\d+)\]")
_TYPE_WORDS = {
    "int": "an integer",
    "float": "a number",
    "str": "a string",
    "bool": "true or false",
    "array": "a list",
    "object": "a table",
}


class Problem(msgspec.Struct, frozen=True):
    """One thing wrong with a value: the dotted key and what is wrong with it."""

    key: str
    message: str
    expected: str | None = None  # for type/range problems: what was wanted


def explain(
    exc: msgspec.ValidationError,
    prefix: str,
    raw: Any,
    struct: type[msgspec.Struct] | None = None,
) -> Problem:
    """Translate a msgspec error on ``raw`` (found at ``prefix``) into a ``Problem``."""
    text = str(exc)
    if match := _UNKNOWN.match(text):
        key = _join(prefix, _path(match["at"]), match["name"])
        hint = ""
        if struct is not None and not match["at"]:
            from difflib import get_close_matches  # only for a mistake: see files.py

            close = get_close_matches(match["name"], field_names(struct), n=1)
            hint = f" (did you mean `{_join(prefix, '', close[0])}`?)" if close else ""
        return Problem(key, f"unknown key `{key}`{hint}")
    if match := _MISSING.match(text):
        key = _join(prefix, _path(match["at"]), match["name"])
        return Problem(key, f"missing required key `{key}`")
    if match := _EXPECTED.match(text):
        path = _path(match["at"])
        key = _join(prefix, path, "")
        wanted = " or ".join(
            _TYPE_WORDS.get(t, t) for t in match["type"].split(" | ") if t != "null"
        )
        value = _lookup(raw, match["at"])
        expected = f"{wanted}{match['rest']}"
        return Problem(key, f"`{key}`: expected {expected}, got {value}", expected)
    return Problem(prefix, f"`{prefix}`: {text}" if prefix else text)


def _path(at: str | None) -> str:
    """msgspec's ``$.a.b[1]`` as ``a.b[1]``."""
    if not at or at == "$":
        return ""
    return at[2:] if at.startswith("$.") else at[1:]


def _join(prefix: str, path: str, name: str) -> str:
    key = ".".join(p for p in (prefix, path) if p)
    if name:
        key = f"{key}.{name}" if key else name
    return key.replace(".[", "[")


def _lookup(raw: Any, at: str | None) -> str:
    value = raw
    for name, index in _PATH_PART.findall((at or "$")[1:]):
        try:
            value = value[name] if name else value[int(index)]
        except (KeyError, IndexError, TypeError):
            return "something else"
    return describe_value(value)


def describe_value(value: Any) -> str:
    """A value as TOML would spell it, shortened."""
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, str):
        text = json.dumps(value, ensure_ascii=False)
    elif isinstance(value, dict):
        text = "a table"
    else:
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
