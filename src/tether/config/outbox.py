"""The ``[outbox]`` table: the kinds of external step a run may propose (docs/reference/outbox.md).

``push`` is built in. A project adds its own kinds, each a fixed argv with
named parameters::

    [outbox.kinds.deploy]
    description = "Deploy a tagged version"
    command = ["./scripts/deploy.sh", "--env", "{env}", "--version", "{version}"]
    params.env = { choices = ["staging", "production"] }
    params.version = { pattern = "v[0-9]+\\.[0-9]+\\.[0-9]+" }

Every ``{name}`` in ``command`` must be a declared parameter and every
parameter must appear; each parameter is checked by ``choices`` or by
``pattern`` (matched against the whole value). The argv is never given to a
shell.
"""

from __future__ import annotations

import re
from typing import Annotated

import msgspec

from tether.config.section import Command, NonEmptyStr, PositiveFloat, Section

BUILTIN_KINDS = ("push",)
KIND_NAME = re.compile(r"[a-z][a-z0-9_-]{0,39}")
PARAM_NAME = re.compile(r"[a-z][a-z0-9_]{0,39}")
PLACEHOLDER = re.compile(r"\{([^{}]*)\}")


class ParamSettings(msgspec.Struct, forbid_unknown_fields=True, kw_only=True, frozen=True):
    """One parameter of a kind: exactly one of ``choices`` and ``pattern``."""

    choices: Annotated[list[NonEmptyStr], msgspec.Meta(min_length=1)] | None = None
    pattern: NonEmptyStr | None = None
    description: str = ""


class KindSettings(msgspec.Struct, forbid_unknown_fields=True, kw_only=True, frozen=True):
    """One ``[outbox.kinds.NAME]`` table."""

    command: Command
    description: str = ""
    params: dict[str, ParamSettings] = msgspec.field(default_factory=dict)
    timeout: PositiveFloat | None = None  # seconds; default: outbox.timeout


class OutboxSettings(Section, frozen=True):
    """``[outbox]``: proposals of external steps, carried out on a person's approval."""

    kinds: dict[str, KindSettings] = msgspec.field(default_factory=dict)
    # how long an approved step may take before it is stopped and recorded as failed
    timeout: PositiveFloat = 600.0

    def __post_init__(self) -> None:
        for name, kind in self.kinds.items():
            check_kind(name, kind)


def check_kind(name: str, kind: KindSettings) -> None:
    """Raise ``ValueError`` naming the key when the kind cannot be proposed as written."""
    key = f"outbox.kinds.{name}"
    if name in BUILTIN_KINDS:
        raise ValueError(f"`{key}`: {name!r} is built in; give your kind another name")
    if not KIND_NAME.fullmatch(name):
        raise ValueError(
            f"`{key}`: a kind's name is lower-case letters, digits, `-` or `_`, starting "
            f"with a letter (at most 40)"
        )
    used: set[str] = set()
    for part in kind.command:
        for placeholder in PLACEHOLDER.findall(part):
            if placeholder not in kind.params:
                raise ValueError(
                    f"`{key}.command` uses {{{placeholder}}}, which is not a parameter "
                    f"(declare it as `{key}.params.{placeholder}`)"
                )
            used.add(placeholder)
    if PLACEHOLDER.search(kind.command[0]):
        raise ValueError(f"`{key}.command`: the program (its first word) must be fixed")
    for param, rule in kind.params.items():
        where = f"{key}.params.{param}"
        if not PARAM_NAME.fullmatch(param):
            raise ValueError(
                f"`{where}`: a parameter's name is lower-case letters, digits or `_`, "
                f"starting with a letter"
            )
        if param not in used:
            raise ValueError(f"`{where}` is declared but `{key}.command` never uses {{{param}}}")
        if (rule.choices is None) == (rule.pattern is None):
            raise ValueError(f"`{where}` needs exactly one of `choices` and `pattern`")
        if rule.pattern is not None:
            try:
                re.compile(rule.pattern)
            except re.error as exc:
                raise ValueError(f"`{where}.pattern` is not a regular expression: {exc}") from None


__all__ = ["BUILTIN_KINDS", "KindSettings", "OutboxSettings", "ParamSettings", "check_kind"]
