"""Mistral Vibe: ``vibe -p … --output streaming``.

Built on recordings of Vibe 2.26.1 (tests/transcripts/vibe/, the shared ones
and tether's own), whose default runtime is the Unified Harness. The streaming
output is small, one JSON object per line, every line with ``sessionId``:

- ``type: "message"``: the user's prompt (``role: "user"``) and the final
  assistant text (``role: "assistant"``, ``content[].text``);
- ``type: "effect"``: one line per **finished** tool call: ``id``
  (``effect-<action id>``), ``detail.toolName`` (``file_system.bash``),
  ``detail.input``, ``state.status`` (``completed``, ``failed``, or
  ``skipped`` when a ``pre_tool`` hook denied it, with ``state.reason``); a
  command that exits non-zero is ``completed`` with ``state.display.success``
  false;
- ``type: "notice"``: hook runs and other notes (``level``, ``message``).

There is no line per model call and none when a tool call starts, so the
number of model steps is not in the stream. It is in the session journal
(``$VIBE_HOME/logs/session/unified/<session>/journal/*.jsonl``): one
``action_result`` of a ``completion`` action per model call (``completion_
succeeded`` with the call's ``usage``, or ``completion_failed`` for one cut
off), read by :meth:`VibeHarness.parse_session_line` as Codex's rollout is.
The journal also closes the turn: ``latestTurn`` with ``status: "completed"``
and ``stopReason`` null for a finished turn, ``"limit"`` when Vibe itself
stopped it on a limit (with the last completion's ``request.iteration`` at its
``max_iterations`` that limit was ``--max-turns``).

Neither the stream nor the journal has a cost. An adapter made by
:meth:`VibeHarness.priced` knows the active model's prices and gives each
completion's usage its cost the way Vibe computes it for ``--max-price``
(:mod:`tether.harnesses.vibe_prices`): derived, not reported.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, ClassVar

import msgspec

from tether.events.model import (
    AnyEvent,
    AssistantText,
    HarnessWarning,
    PermissionDenied,
    RunEnded,
    SessionStarted,
    StepStarted,
    ToolCallStarted,
    ToolResult,
    Usage,
    unknown,
)
from tether.harnesses.base import IterationSource, RunSpec, ToolAllowance, decode_line
from tether.harnesses.vibe_prices import HOME_ENV, MODEL_ENV, VibePrices, resolve_prices, vibe_home

EFFECT_PREFIX = "effect-"
# Vibe's own wall-clock belt fires this long after tether's own timeout.
TIME_LIMIT_SLACK_SECONDS = 5.0


class _Text(msgspec.Struct):
    type: str | None = None
    text: str | None = None


class _Detail(msgspec.Struct):
    toolName: str | None = None  # noqa: N815 - Vibe's field name
    input: Any = None


class _Display(msgspec.Struct):
    success: bool | None = None


class _State(msgspec.Struct):
    status: str | None = None
    display: _Display | None = None
    reason: str | None = None
    outputText: str | None = None  # noqa: N815
    output: msgspec.Raw = msgspec.Raw(b"")


class _Line(msgspec.Struct):
    type: str | None = None
    id: str | None = None
    sessionId: str | None = None  # noqa: N815
    role: str | None = None
    content: list[_Text] | None = None
    detail: _Detail | None = None
    state: _State | None = None
    level: str | None = None
    message: str | None = None


class _Request(msgspec.Struct):
    iteration: int | None = None
    max_iterations: int | None = None


class _Usage(msgspec.Struct):
    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0


class _CompletionBody(msgspec.Struct):
    usage: _Usage | None = None


class _Result(msgspec.Struct):
    type: str | None = None
    result: msgspec.Raw = msgspec.Raw(b"")


class _Turn(msgspec.Struct):
    status: str | None = None
    stopReason: str | None = None  # noqa: N815


class _Envelope(msgspec.Struct):
    latestTurn: _Turn | None = None  # noqa: N815


class _Op(msgspec.Struct):
    op: str | None = None
    state: _Envelope | None = None


class _Params(msgspec.Struct):
    sessionId: str | None = None  # noqa: N815


class _Payload(msgspec.Struct):
    kind: str | None = None
    action_id: str | None = None
    request: _Request | None = None
    result: _Result | None = None
    delta: list[_Op] | None = None
    params: _Params | None = None


class _Record(msgspec.Struct):
    type: str | None = None
    sequence: int | None = None
    payload: msgspec.Raw = msgspec.Raw(b"")


_decoder = msgspec.json.Decoder(_Line)
_record_decoder = msgspec.json.Decoder(_Record)
_payload_decoder = msgspec.json.Decoder(_Payload)
_body_decoder = msgspec.json.Decoder(_CompletionBody)

# Journal records that say nothing tether counts.
_QUIET_RECORDS = frozenset({"core_input", "receipt_succeeded", "receipt_failed"})
_JOURNAL_RECORDS = frozenset(
    {"command_reserved", "action_intent", "action_result", "projection_delta", *_QUIET_RECORDS}
)
_FAILED_STATUSES = frozenset({"failed", "skipped", "cancelled", "error"})


def allow_assignment(allow: ToolAllowance) -> str:
    """Vibe's bash allow-list for ``allow``, as the ``VIBE_TOOLS`` config variable: only
    these command prefixes run without asking (Vibe's default list also lets read-only
    commands such as ``cat`` and ``grep`` through). Vibe's environment layer lies over
    the user's and the project's config and a list replaces a list, so this one replaces
    theirs; only an agent profile or an admin config, which lie above it, still count."""
    import json
    import shlex

    prefixes = [shlex.join(prefix) for prefix in allow.commands]
    return f"VIBE_TOOLS={json.dumps({'bash': {'allowlist': prefixes}})}"


def allow_args(allow: ToolAllowance) -> list[str]:
    """Vibe's own tool filter for ``allow``: in ``-p`` only the enabled tools exist.

    ``write_file`` stays only to write the conclusion; Vibe cannot narrow it to
    one file (it asks first, and ``-p`` without ``--auto-approve`` has nobody to
    ask). A profile with ``--auto-approve`` (``--yolo``) approves every call.
    """
    tools = ["bash", *(["write_file"] if allow.write_file is not None else [])]
    return [arg for tool in tools for arg in ("--enabled-tools", tool)]


class VibeHarness:
    name: ClassVar[str] = "vibe"
    executable: ClassVar[str] = "vibe"
    iteration_source: ClassVar[IterationSource] = "session_file"
    # Vibe makes its own session id; ``--resume`` is the only way to name one.
    accepts_session_id: ClassVar[bool] = False
    has_turn_cap: ClassVar[bool] = True
    # ``--max-turns N`` lets exactly N model calls happen, then Vibe stops by itself
    # (measured against 2.26.1): the supervisor passes the budget itself, not N+1.
    turn_cap_is_exact: ClassVar[bool] = True
    # The stream shows a tool call only once it has finished (start and result at once).
    announces_calls: ClassVar[bool] = False
    # Derived from the active model's configured prices, once ``priced`` resolved them.
    reports_cost: ClassVar[bool] = True

    def __init__(self, prices: VibePrices | None = None) -> None:
        # From the journal's last completion request: whether a "limit" stop was the turn cap.
        self._iteration: int | None = None
        self._max_iterations: int | None = None
        self.prices = prices

    def preflight(
        self,
        env: Mapping[str, str],
        cwd: Path,
        args: Iterable[str] = (),
        model: str | None = None,
        cost_usd: float | None = None,
    ) -> None:
        """Refuse (``ConfigError``) a run Vibe cannot do: a model that is not one of the
        aliases its configuration defines (Vibe falls back to its default provider)."""
        resolve_prices(env, cwd, args, model)

    def priced(
        self,
        env: Mapping[str, str],
        cwd: Path,
        args: Iterable[str] = (),
        model: str | None = None,
    ) -> VibeHarness:
        """An adapter whose usage events carry their cost, for a run of ``model`` in ``cwd``.

        Raises ``ConfigError`` when Vibe's configuration cannot be read, names an
        active model it does not define, or prices that model at nothing (a cost
        limit could then never fire).
        """
        prices = resolve_prices(env, cwd, args, model)
        if prices.input_price == 0 and prices.output_price == 0:
            from tether.core.errors import ConfigError

            raise ConfigError(
                f"Vibe's model {prices.alias!r} has no prices ({prices.source}), so its cost "
                f"is always 0 and a cost limit could never fire: set input_price and "
                f"output_price (USD per million tokens) in its [[models]] entry, or use "
                f"--tokens.",
                key="cost_limit_usd",
            )
        return VibeHarness(prices)

    def build_command(self, spec: RunSpec) -> list[str]:
        assignments: list[str] = []
        # A priced run pins the model it was priced for.
        model = spec.model or (self.prices.alias if self.prices is not None else None)
        if model:
            # Vibe has no model flag; any config field can be set as VIBE_<FIELD>.
            assignments.append(f"{MODEL_ENV}={model}")
        if spec.settings_path is not None:
            # A per-run VIBE_HOME whose hooks.toml holds the run's hooks
            # (tether.runs.vibe_home lays it over the user's own).
            assignments.append(f"{HOME_ENV}={spec.settings_path.parent}")
        if spec.allow is not None:
            assignments.append(allow_assignment(spec.allow))
        # ``env`` sets them for the one process and then execs vibe in place.
        argv: list[str] = ["env", *assignments] if assignments else []
        prompt = " " + spec.prompt if spec.prompt.startswith("-") else spec.prompt
        argv += [self.executable, "-p", prompt, "--output", "streaming"]
        if spec.max_turns is not None:
            argv += ["--max-turns", str(spec.max_turns)]
        if spec.max_tokens is not None:
            argv += ["--max-tokens", str(spec.max_tokens)]
        if spec.max_cost_usd is not None:
            argv += ["--max-price", repr(float(spec.max_cost_usd))]
        if spec.time_limit_seconds is not None:
            limit = math.ceil(spec.time_limit_seconds + TIME_LIMIT_SLACK_SECONDS)
            argv += ["--time-limit", str(limit)]
        argv += list(spec.extra_args)
        if spec.allow is not None:
            argv += allow_args(spec.allow)
        return argv

    def parse_line(self, line: bytes) -> list[AnyEvent]:
        obj = decode_line(_decoder, line)
        if isinstance(obj, list):
            return obj
        kind = obj.type
        events: list[AnyEvent] = [SessionStarted(session_id=obj.sessionId)] if obj.sessionId else []
        if kind == "effect":
            return events + _effect(obj, line)
        if kind == "message":
            if obj.role == "assistant":
                text = "".join(part.text or "" for part in obj.content or () if part.type == "text")
                if text:
                    events.append(AssistantText(text=text, message_id=obj.id))
                return events
            if obj.role == "user" or obj.role == "system":
                return events
            return [*events, unknown(line, f"message role {obj.role}")]
        if kind == "notice":
            if obj.level in ("warning", "error"):
                events.append(HarnessWarning(message=obj.message or ""))
            return events
        return [*events, unknown(line, kind)]

    def parse_session_line(self, line: bytes) -> list[AnyEvent]:
        """Journal records: one completion ``action_result`` per model call."""
        obj = decode_line(_record_decoder, line)
        if isinstance(obj, list):
            return obj
        kind = obj.type
        if kind in _QUIET_RECORDS:
            return []
        if kind not in _JOURNAL_RECORDS:
            return [unknown(line, f"journal record {kind}")]
        try:
            payload = _payload_decoder.decode(obj.payload) if obj.payload else _Payload()
        except (ValueError, RecursionError) as exc:
            return [unknown(line, f"{kind}: unexpected payload: {exc}")]
        if kind == "action_intent":
            if payload.kind == "completion" and payload.request is not None:
                self._iteration = payload.request.iteration
                self._max_iterations = payload.request.max_iterations
            return []
        if kind == "action_result":
            return _completion_result(payload, obj.sequence, self.prices)
        if kind == "projection_delta":
            return self._turn_end(payload)
        # command_reserved: the turn/start command names the session
        sid = payload.params.sessionId if payload.params else None
        return [SessionStarted(session_id=sid)] if sid else []

    def _turn_end(self, payload: _Payload) -> list[AnyEvent]:
        for op in payload.delta or ():
            turn = op.state.latestTurn if op.state is not None else None
            if turn is None or turn.status != "completed":
                continue
            reason = turn.stopReason
            if not reason:
                return [RunEnded(status="success", stop_reason="completed")]
            if reason == "limit" and self._at_turn_cap():
                reason = "max_turns"
            return [RunEnded(status="failure", stop_reason=reason)]
        return []

    def _at_turn_cap(self) -> bool:
        it, cap = self._iteration, self._max_iterations
        return it is not None and cap is not None and it + 1 >= cap

    def session_file(self, session_id: str, env: Mapping[str, str]) -> Path | None:
        """The first segment of session ``session_id``'s journal.

        ``$VIBE_HOME/logs/session/unified/<session_id>/journal/<sequence>.jsonl``;
        a ``vibe -p`` run writes all its records to the first segment and opens
        the next (empty) one as it exits.
        """
        if not session_id or "/" in session_id or os.sep in session_id or session_id[0] == ".":
            return None
        journal = vibe_home(env) / "logs" / "session" / "unified" / session_id / "journal"
        try:
            segments = sorted(p for p in journal.iterdir() if p.suffix == ".jsonl")
        except OSError:
            return None
        return segments[0] if segments else None


def _effect(obj: _Line, line: bytes) -> list[AnyEvent]:
    """A finished tool call: its start and its result at once."""
    raw_id = obj.id or ""
    call_id = raw_id.removeprefix(EFFECT_PREFIX)
    if not call_id:
        return [unknown(line, "effect without id")]
    detail = obj.detail or _Detail()
    state = obj.state or _State()
    name = detail.toolName or ""
    status = state.status or ""
    if obj.state is None or not status:
        # Still running (an interactive session's stream): only the start.
        return [ToolCallStarted(call_id=call_id, name=name, input=detail.input)]
    size = len(state.outputText.encode("utf-8", "replace")) if state.outputText else 0
    if not size and bytes(state.output) not in (b"", b"null"):
        size = len(state.output)
    events: list[AnyEvent] = [
        ToolCallStarted(call_id=call_id, name=name, input=detail.input),
        ToolResult(call_id=call_id, is_error=_failed(status, state), output_size=size),
    ]
    if status == "skipped":
        events.append(PermissionDenied(tool_name=name, call_id=call_id, reason=state.reason))
    return events


def _failed(status: str, state: _State) -> bool:
    # A command that exits non-zero stays "completed", with display.success false.
    return status in _FAILED_STATUSES or (
        state.display is not None and state.display.success is False
    )


def _completion_result(
    payload: _Payload, sequence: int | None, prices: VibePrices | None
) -> list[AnyEvent]:
    result = payload.result
    rtype = (result.type if result is not None else None) or ""
    if not rtype.startswith("completion_"):
        return []  # tool and hook results: the stream's effect lines count those
    key = payload.action_id or (f"sequence:{sequence}" if sequence is not None else None)
    events: list[AnyEvent] = [StepStarted(message_id=key)]
    if rtype == "completion_succeeded" and result is not None and result.result:
        try:
            body = _body_decoder.decode(result.result)
        except (ValueError, RecursionError):
            body = _CompletionBody()
        if body.usage is not None:
            u = body.usage
            events.append(
                Usage(
                    input_tokens=u.input_tokens,
                    output_tokens=u.output_tokens,
                    cache_read_tokens=u.cached_input_tokens,
                    cost_usd=(
                        prices.cost(u.input_tokens, u.output_tokens, u.cached_input_tokens)
                        if prices is not None
                        else None
                    ),
                    cumulative=False,
                )
            )
    elif rtype != "completion_succeeded":
        events.append(HarnessWarning(message=f"model call ended as {rtype}"))
    return events
