"""The autonomy policy tether enforces: explicit rules, not a model's judgment.

(docs/reference/loop.md#the-autonomy-policy)

For speed, a policy remembers each text's verdict by the text's content
(``Policy.assess``): ``bench/tick.py`` shows the warm tick otherwise spends
most of its time matching unchanged INBOX entries against the rules again
(0.5x the time of reading every board file at 1,000 tickets, 1x at 10,000;
remembered, under 0.07x). The rules themselves have one home,
``tether.config.autonomy_rules``.

At triage and before a ticket's run, the unit's text is matched against the
``[policy]`` rules (see ``tether.config.autonomy_rules``): a request for an externally
visible or irreversible step goes to ``USER/approval``, one that needs a
session only a person can start to ``USER/session``, each with the rule that
matched and the words it matched. A ticket a person approved (``tether board
approve``, front matter ``approved``) passes the approval rules.

During the runs the loop dispatches, the gate refuses tool calls that match
the command rules but the exact commands a person approved after the gate
refused them for this ticket (outside the sandbox only: see
``tether.gate.command_policy``, a belt; the outbox is the way a run asks for such a
step). The policy reaches the gate as data: a small JSON file written at
dispatch, named by ``TETHER_POLICY`` in the agent's environment
(``tether.gate.command_policy`` reads it); the gate appends each refusal to
``<file>.refused.jsonl``, which the loop reads after the run.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tether.board import Board, State, Ticket
from tether.clock import Clock, to_iso
from tether.config import Config
from tether.config.autonomy_rules import (
    DEFAULT_APPROVAL,
    DEFAULT_COMMANDS,
    DEFAULT_SESSION,
    PolicySettings,
    rules,
)
from tether.core.errors import TetherError, UsageError
from tether.core.exit_codes import ExitCode
from tether.fs import atomic_write_text
from tether.human_only import refuse_inside_agent, who

APPROVED = "approved"  # front matter key: who approved, when, with which note, which commands
GATE_REFUSED = "gate_refused"  # front matter key: the commands the gate refused in its last run
ADVICE = "advice"  # front matter key: the step the policy expects will wait for a person
POLICY_ENV = "TETHER_POLICY"  # the gate reads the file this names (tether.gate.command_policy)


class ApprovalRefusedError(TetherError):
    """An approval asked for from inside an agent's process tree: only a person approves."""

    exit_code = ExitCode.GATE_REFUSED


@dataclass(frozen=True)
class Verdict:
    reason: str  # "approval" or "session": the USER/* folder
    rule: str
    matched: str

    def needs(self, ticket_id: str | None = None) -> str:
        what = (
            "a human approval: the text asks for an externally visible or irreversible step"
            if self.reason == "approval"
            else "a person: the text asks for a session only a person can start"
        )
        target = ticket_id or "<this ticket's id>"
        how = (
            f"; approve with `tether board approve {target}`, or change the text"
            if self.reason == "approval"
            else "; do it yourself, then move the ticket to DONE"
        )
        return f'{what} (policy rule `{self.rule}` matched "{self.matched}"){how}'

    def advice(self) -> str:
        """Triage advice for a sandboxed loop: the unit runs, and probably ends proposing."""
        return (
            f"probably ends waiting for a person (policy rule `{self.rule}` matched "
            f'"{self.matched}"): its run works in the sandbox and proposes any external step '
            f"(`tether outbox`)"
        )


def holding(verdict: Verdict | None, sandboxed: bool) -> Verdict | None:
    """The verdict that keeps a unit from running, if any.

    Without the sandbox every rule holds (a run could take the step itself). With it
    the approval rules are only advice: the run cannot reach a remote, a registry or a
    cluster and proposes such steps instead, so a unit is dispatched as long as its
    work can be done inside; the session rules (a login, a GUI, hardware) still hold.
    """
    if verdict is None or (sandboxed and verdict.reason == "approval"):
        return None
    return verdict


# How many texts' verdicts a policy remembers (oldest forgotten first): more than a
# board's INBOX and open TODO items, so a warm tick matches no text twice.
MEMO_SIZE = 4096


@dataclass(frozen=True)
class Policy:
    approval: Mapping[str, re.Pattern[str]]
    session: Mapping[str, re.Pattern[str]]
    commands: Mapping[str, str]
    protected_branches: tuple[str, ...]
    # the verdict per (approved, digest of the text): the rules are fixed for the policy's
    # life, so a text is matched once; a tick over an unchanged board matches nothing again
    _memo: dict[tuple[bool, bytes], Verdict | None] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    @classmethod
    def from_config(cls, config: Config) -> Policy:
        settings = config.section("policy", PolicySettings)
        return cls(
            approval=_compiled(rules(DEFAULT_APPROVAL, settings.approval)),
            session=_compiled(rules(DEFAULT_SESSION, settings.session)),
            commands=rules(DEFAULT_COMMANDS, settings.commands),
            protected_branches=tuple(settings.protected_branches),
        )

    def assess(self, text: str, *, approved: bool = False) -> Verdict | None:
        """The first rule the text matches (session rules first: no approval helps there).

        Each rule is a regular expression compiled once; the verdict is remembered
        by the text's content (``bench/tick.py``: the warm tick matched every INBOX
        entry again and spent most of its time here)."""
        key = (
            approved,
            hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest(),
        )
        try:
            return self._memo[key]
        except KeyError:
            pass
        verdict = self._match(text, approved)
        if len(self._memo) >= MEMO_SIZE:
            del self._memo[next(iter(self._memo))]
        self._memo[key] = verdict
        return verdict

    def _match(self, text: str, approved: bool) -> Verdict | None:
        for reason, table in (("session", self.session), ("approval", self.approval)):
            if reason == "approval" and approved:
                continue
            for name, pattern in table.items():
                match = pattern.search(text)
                if match is not None:
                    return Verdict(reason, name, " ".join(match.group(0).split())[:80])
        return None

    def ticket(self, ticket: Ticket) -> Verdict | None:
        return self.assess(f"{ticket.title}\n{ticket.body}", approved=approval(ticket) is not None)

    def gate_data(self, ticket: Ticket | None, work_tree: Path) -> dict[str, Any]:
        return {
            "ticket": ticket.id if ticket is not None else None,
            "allowed": approved_commands(ticket) if ticket is not None else [],
            "work_tree": str(work_tree.resolve()),
            "protected_branches": list(self.protected_branches),
            "commands": dict(self.commands),
        }


def _compiled(table: Mapping[str, str]) -> dict[str, re.Pattern[str]]:
    return {name: re.compile(pattern, re.IGNORECASE) for name, pattern in table.items()}


def approval(ticket: Ticket) -> Mapping[str, Any] | None:
    value = ticket.front.get(APPROVED)
    return value if isinstance(value, Mapping) and value.get("by") else None


def _commands(value: object) -> list[str]:
    return [c for c in value if isinstance(c, str)] if isinstance(value, list) else []


def approved_commands(ticket: Ticket) -> list[str]:
    """The exact commands a person let through the gate for this ticket's runs."""
    record = approval(ticket)
    return _commands(record.get("commands")) if record is not None else []


@dataclass(frozen=True)
class GateRefusal:
    """A step the gate refused a dispatched run, as the run's refusal log says it."""

    command: str | None
    rule: str | None

    @classmethod
    def parse(cls, entry: Mapping[str, object]) -> GateRefusal:
        command, rule = entry.get("command"), entry.get("rule")
        return cls(
            command if isinstance(command, str) else None,
            rule if isinstance(rule, str) else None,
        )

    @property
    def shown(self) -> str:
        """The command in backticks, ``?`` when the log did not say it."""
        return f"`{self.command if self.command is not None else '?'}`"

    @property
    def shown_with_rule(self) -> str:
        return f"{self.shown} (rule `{self.rule if self.rule is not None else '?'}`)"


class GateFile:
    """The policy of one dispatched run, as the gate reads it; removed after the run."""

    def __init__(self, home: Path, data: Mapping[str, Any]) -> None:
        folder = home / "policy"
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / f"{uuid.uuid4().hex}.json"
        self.refusal_log = Path(f"{self.path}.refused.jsonl")
        atomic_write_text(self.path, json.dumps({**data, "refusals": str(self.refusal_log)}))

    def env(self) -> dict[str, str]:
        return {POLICY_ENV: str(self.path)}

    def refusals(self) -> list[GateRefusal]:
        try:
            text = self.refusal_log.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        found: list[GateRefusal] = []
        for line in text.splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if isinstance(entry, dict):
                found.append(GateRefusal.parse(entry))
        return found

    def remove(self) -> None:
        for path in (self.path, self.refusal_log):
            path.unlink(missing_ok=True)


def approve(
    board: Board,
    ticket_id: str,
    *,
    note: str | None,
    clock: Clock,
    env: Mapping[str, str] | None = None,
) -> Ticket:
    """Record a person's approval on the ticket; a ticket waiting in USER/approval goes back.

    Refused (``ApprovalRefusedError``, exit 30) inside an agent's process tree, and
    (exit 2) for a ticket that waits for outbox proposals: each is decided on its own.
    """
    from tether.core.session_stamp import stamp

    environ = os.environ if env is None else env
    refuse_inside_agent("board approve", environ=environ, error=ApprovalRefusedError)
    ticket = board.get(ticket_id)
    waiting = ticket.front.get("proposals")
    if ticket.state is State.USER and isinstance(waiting, list) and waiting:
        raise UsageError(
            f"{ticket.id} waits for proposals of its run ({', '.join(map(str, waiting))}), not "
            f"for a ticket approval: decide each with `tether outbox approve ID` or "
            f"`tether outbox reject ID --reason …` (`tether outbox show ID` shows what it does)"
        )
    record: dict[str, Any] = {"by": who(), "at": to_iso(clock.now())}
    if note:
        record["note"] = note
    # the gate lets through exactly the steps a person saw refused, never every later call
    steps = [*approved_commands(ticket), *_commands(ticket.front.get(GATE_REFUSED))]
    if steps:
        record["commands"] = list(dict.fromkeys(steps))
    text = f"approved by {record['by']}" + (f": {note}" if note else "")
    if steps:
        text += "; the gate lets through " + ", ".join(f"`{c}`" for c in record["commands"])
    if board.stamp is None:
        line = stamp(environ, "tether-board", day=clock.now().date().isoformat())
        board.stamp = lambda: line
    if ticket.state is State.USER and ticket.reason in ("approval", None):
        return board.move(ticket.id, State.ACTIONABLE, note=text, front={APPROVED: record})
    return board.update(ticket.id, note=text, front={APPROVED: record})
