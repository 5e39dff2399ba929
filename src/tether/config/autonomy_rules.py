"""The ``[policy]`` table: what counts as autonomous, as explicit rules
(docs/reference/loop.md#the-autonomy-policy).

Three tables of named regular expressions (case-insensitive) and one list:

- ``approval``: ticket and note text asking for an externally visible or
  irreversible step (publish, release, deploy, production, push to a protected
  branch, payment, deletion of data, sending mail or messages). A match sends
  the unit to ``USER/approval`` with the rule's name and the matched words.
- ``session``: text asking for what only a person can do in a session of their
  own (a GUI, a login, hardware). A match sends the unit to ``USER/session``.
- ``commands``: tool calls the gate refuses where no sandbox is the wall (see
  ``tether.gate.command_policy``) unless the ticket carries a human approval
  (``tether board approve``); the defaults live in the gate.
- ``protected_branches``: ``git push`` to these is refused the same way.

A table only names what it changes: its rules are laid over the defaults, and
a rule set to ``""`` turns that default off.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import msgspec

from tether.config.section import Section
from tether.gate.command_policy import DEFAULT_COMMANDS, DEFAULT_PROTECTED

DEFAULT_APPROVAL: dict[str, str] = {
    "publish": r"\b(publish(es|ed|ing)?|npm publish|twine upload|cargo publish)\b",
    "release": (
        r"\b(cut|tag|ship|create|make|do|push)\s+(a\s+|the\s+)?(new\s+)?release\b"
        r"|\brelease\s+v?\d+(\.\d+)+\b|\bgh release create\b"
    ),
    "deploy": r"\bdeploy(s|ed|ing|ment)?\b|\bgo(es|ing)?\s+live\b|\broll\s*out\b",
    "production": (
        r"\b(to|in|on|into|onto)\s+(the\s+)?(production|prod)\b"
        r"|\bproduction\s+(server|database|db|environment|site)\b"
    ),
    "push-protected": r"\b(force[- ]push|push(es|ed|ing)?\b.{0,40}\b(main|master)\b)",
    "payment": (
        r"\b(pay|pays|paid|payment|purchase|buy|spend|refund)\b(?!\s+attention)"
        r"|\bsubscribe\s+to\b|[$€£]\s?\d"
    ),
    "delete": (
        r"\b(delete|drop|wipe|purge|destroy|truncate)\b.{0,40}\b(database|db|table|bucket|"
        r"repo(sitory)?|account|backups?|production|prod|customers?|users?|data)\b|\brm\s+-rf\b"
    ),
    "send": (
        r"\b(send|e-?mail|mail|post|tweet|announce|notify|message)\b.{0,40}\b(customers?|"
        r"users?|clients?|mailing list|newsletter|slack|twitter|everyone|subscribers)\b"
        r"|\bsend\s+(an?\s+|the\s+)?(e-?mail|message|newsletter|invoice)\b"
    ),
}

DEFAULT_SESSION: dict[str, str] = {
    "login": r"\b(log\s?in|sign\s?in)\s+(to|into|on|at)\b|\b(2fa|two-factor|mfa|captcha)\b",
    "gui": (
        r"\b(in|on|using|through|via)\s+the\s+(gui|desktop app|web console|browser window)\b"
        r"|\bby hand in the (ui|gui|browser)\b"
    ),
    "hardware": (
        r"\b(plug|unplug|flash|reboot|power[- ]cycle|connect)\b.{0,30}\b(device|board|phone|"
        r"router|printer|usb|hardware|dongle)\b"
    ),
}

# The command rules have their home in the gate (stdlib only, it checks every call):
# matched against a tool call's command line; ``git push`` is also checked against
# ``protected_branches`` and ``rm -r``/``find -delete`` against the work tree, in code.


class PolicySettings(Section, frozen=True):
    approval: dict[str, str] = msgspec.field(default_factory=dict)
    session: dict[str, str] = msgspec.field(default_factory=dict)
    commands: dict[str, str] = msgspec.field(default_factory=dict)
    protected_branches: list[str] = msgspec.field(default_factory=lambda: [*DEFAULT_PROTECTED])

    def __post_init__(self) -> None:
        for table, rules in (
            ("approval", self.approval),
            ("session", self.session),
            ("commands", self.commands),
        ):
            for name, pattern in rules.items():
                try:
                    re.compile(pattern)
                except re.error as exc:
                    raise ValueError(
                        f"`policy.{table}.{name}` is not a regular expression: {exc}"
                    ) from None


def rules(defaults: Mapping[str, str], given: Mapping[str, str]) -> dict[str, str]:
    """The defaults with the table's rules laid over them; ``""`` turns a rule off."""
    merged = {**defaults, **given}
    return {name: pattern for name, pattern in merged.items() if pattern}


__all__ = ["DEFAULT_APPROVAL", "DEFAULT_COMMANDS", "DEFAULT_SESSION", "PolicySettings", "rules"]
