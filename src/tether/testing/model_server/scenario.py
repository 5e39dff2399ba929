"""Scenarios: what the scripted model answers at each step.

The server keeps no per-client state. It derives the step from the tool-call ids
the client echoes back in the request history: every id it serves has the form
``call_mock_s<step>_c<k>_<hex>`` (``toolu_mock_…`` for the Anthropic protocol),
so the next step is one past the highest step seen. A retried request, or one
that carries the results of several parallel calls, gets the same answer.

Built-in scenarios:

- ``five-steps``: step 1 one shell call (``echo step 1``), step 2 two calls in one
  response (``echo step 2a``, ``echo step 2b``), steps 3 and 4 one call each,
  step 5 the final text ``All five steps done.``
- ``steps:N``: steps 1 … N-1 one shell call each (``echo step K``), step N the
  final text ``All N steps done.``
- ``forever``: one shell call (``echo tick K``) per step, without end.
- ``touch-forever``: one shell call per step that leaves a file behind
  (``touch tick-K.done`` in the agent's working directory), without end: the
  files prove which calls were executed, not only which were asked for.
- ``failing-tool``: step 1 a shell call that fails (``ls`` of a path that does
  not exist, exit 2), step 2 ``echo after the failure``, step 3 the final text
  ``Done after a failing step.``
- ``call:NAME`` (or ``call:NAME:{JSON arguments}``): step 1 calls the offered
  tool named ``NAME`` — or whose name ends in ``__NAME``, ``.NAME``, ``/NAME``,
  ``-NAME`` or ``_NAME``, as agent CLIs prefix MCP tools (``mcp__tether__loop_tick``,
  ``tether_loop_tick``) — with
  those arguments; step 2 the final text ``Called NAME.``
"""

from __future__ import annotations

import json
import re
import secrets
import shlex
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

_CALL_ID = re.compile(r"(?:call|toolu)_mock_s(\d+)_c(\d+)_[0-9a-f]+")

FAILING_COMMAND = "ls /nonexistent-tether-scenario-path"
SCENARIO_NAMES = (
    "five-steps",
    "steps:N",
    "forever",
    "touch-forever",
    "failing-tool",
    "call:NAME",
)


@dataclass(frozen=True)
class ShellCalls:
    """Answer with one shell tool call per command, all in the same response."""

    commands: tuple[str, ...]


@dataclass(frozen=True)
class FinalText:
    """Answer with plain text and no tool call: the agent's turn ends."""

    text: str


@dataclass(frozen=True)
class NamedCall:
    """Answer with one call of the tool ``name`` (an MCP tool, say) with ``arguments``."""

    name: str
    arguments: tuple[tuple[str, object], ...] = ()


Action = ShellCalls | FinalText | NamedCall


@dataclass(frozen=True)
class Scenario:
    """A named script: ``action(step)`` for every step from 1 on."""

    name: str
    action: Callable[[int], Action]
    # the step whose answer is the final text, None when the scenario never ends
    last_step: int | None
    # count steps by the model's answers in the history instead of by the tool calls:
    # a final text that a Stop hook sends back for more work is a step too
    # (Anthropic protocol only)
    by_turns: bool = False

    @property
    def tool_calls(self) -> int | None:
        """Tool calls the whole script serves, None when it never ends."""
        if self.last_step is None:
            return None
        actions = [self.action(s) for s in range(1, self.last_step)]
        return sum(len(a.commands) for a in actions if isinstance(a, ShellCalls)) + sum(
            1 for a in actions if isinstance(a, NamedCall)
        )


def _five_steps(step: int) -> Action:
    if step == 2:
        return ShellCalls(("echo step 2a", "echo step 2b"))
    if step < 5:
        return ShellCalls((f"echo step {step}",))
    return FinalText("All five steps done.")


def _steps(n: int) -> Callable[[int], Action]:
    def action(step: int) -> Action:
        if step < n:
            return ShellCalls((f"echo step {step}",))
        return FinalText(f"All {n} steps done.")

    return action


def _forever(step: int) -> Action:
    return ShellCalls((f"echo tick {step}",))


def _touch_forever(step: int) -> Action:
    return ShellCalls((f"touch tick-{step}.done",))


def _failing_tool(step: int) -> Action:
    if step == 1:
        return ShellCalls((FAILING_COMMAND,))
    if step == 2:
        return ShellCalls(("echo after the failure",))
    return FinalText("Done after a failing step.")


def touch_files(paths: Sequence[str], name: str = "touch-files") -> Scenario:
    """One shell call per step that creates ``paths[k-1]`` (absolute paths, so the
    files land outside the agent's working folder), then the final text.

    ``tether doctor``'s probe: whether the file of call K exists proves whether
    call K was executed, wherever the agent ran.
    """
    commands = tuple(f"touch {shlex.quote(path)}" for path in paths)

    def action(step: int) -> Action:
        if step <= len(commands):
            return ShellCalls((commands[step - 1],))
        return FinalText(f"All {len(commands)} calls asked for.")

    return Scenario(name, action, last_step=len(commands) + 1)


def _call(name: str, arguments: dict[str, object]) -> Callable[[int], Action]:
    call = NamedCall(name, tuple(arguments.items()))

    def action(step: int) -> Action:
        return call if step == 1 else FinalText(f"Called {name}.")

    return action


def _parse_call(spec: str) -> Scenario:
    name, _, raw = spec.removeprefix("call:").partition(":")
    if not re.fullmatch(r"[A-Za-z0-9_.\-]+", name):
        raise ValueError(f"call:NAME needs a tool name, got {spec!r}")
    try:
        arguments = json.loads(raw) if raw else {}
    except ValueError as exc:
        raise ValueError(f"call:{name}: the arguments are not JSON ({exc})") from None
    if not isinstance(arguments, dict):
        raise ValueError(f"call:{name}: the arguments must be a JSON object")
    return Scenario(f"call:{name}", _call(name, arguments), last_step=2)


def matches_tool(offered: str, wanted: str) -> bool:
    """Whether the offered tool name is ``wanted``, bare or with a client's prefix
    (``mcp__tether__`` for Claude Code and Codex, ``tether_`` for Vibe)."""
    return offered == wanted or any(
        offered.endswith(sep + wanted) for sep in ("__", ".", "/", "-", "_")
    )


def parse_scenario(spec: str) -> Scenario:
    """A scenario by its name: ``five-steps``, ``forever``, ``steps:N`` (N ≥ 1), ``call:NAME``."""
    text = spec.strip()
    if text.startswith("call:"):
        return _parse_call(text)
    if text == "five-steps":
        return Scenario("five-steps", _five_steps, last_step=5)
    if text == "forever":
        return Scenario("forever", _forever, last_step=None)
    if text == "touch-forever":
        return Scenario("touch-forever", _touch_forever, last_step=None)
    if text == "failing-tool":
        return Scenario("failing-tool", _failing_tool, last_step=3)
    if text.startswith("steps:"):
        raw = text.removeprefix("steps:")
        if raw.isdigit() and int(raw) >= 1:
            n = int(raw)
            return Scenario(f"steps:{n}", _steps(n), last_step=n)
        raise ValueError(f"steps:N needs a whole number N >= 1, got {spec!r}")
    raise ValueError(f"unknown scenario {spec!r}; known: {', '.join(SCENARIO_NAMES)}")


def step_of(call_id: str) -> int | None:
    """The step a served call id belongs to, None for ids the server did not make."""
    m = _CALL_ID.search(call_id)
    return int(m.group(1)) if m else None


def next_step(echoed_call_ids: Iterable[str]) -> int:
    """One past the highest step among the echoed ids; 1 for a fresh conversation."""
    steps = [s for s in map(step_of, echoed_call_ids) if s is not None]
    return max(steps, default=0) + 1


def new_call_id(prefix: str, step: int, index: int) -> str:
    """A fresh id that encodes its step and its index within the response."""
    return f"{prefix}_mock_s{step}_c{index}_{secrets.token_hex(4)}"


def new_response_id(prefix: str) -> str:
    return f"{prefix}_mock_{secrets.token_hex(6)}"
