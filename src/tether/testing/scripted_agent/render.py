"""The contract between the agent loop and a harness's output format.

The loop (``agent.py``) decides what happens; a renderer (one module per
format) prints it exactly as that harness's CLI would, and writes the harness's
own session log where tether reads one (Codex's rollout file).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from tether.testing.scripted_agent.emit import LineWriter
from tether.testing.scripted_agent.plan import Call, Step

EndKind = Literal["completed", "failed", "max_turns", "hook_stopped"]
OutcomeStatus = Literal["completed", "denied", "stopped"]


@dataclass(frozen=True)
class Context:
    session_id: str
    model: str
    prompt: str
    cwd: str
    env: Mapping[str, str]
    max_turns: int | None = None


@dataclass(frozen=True)
class Outcome:
    """What became of one tool call."""

    call: Call
    output: str
    is_error: bool = False
    status: OutcomeStatus = "completed"
    exit_code: int | None = 0


@dataclass(frozen=True)
class Ending:
    kind: EndKind
    message: str = ""
    final_text: str = ""
    steps: int = 0
    # Tool calls a hook denied, in Claude Code's ``permission_denials`` shape.
    denials: Sequence[Call] = field(default_factory=tuple)


class Renderer(Protocol):
    # Prefix of the tool-call ids this harness's model gives out.
    id_prefix: str
    # What the harness's todo/plan tool answers (``--todo``).
    todo_output: str

    def begin(self) -> None:
        """Lines printed before the first model call."""

    def step_requested(self, number: int) -> None:
        """A model request is about to go out (printed before the think time)."""

    def model_step(self, step: Step) -> None:
        """The model's answer for ``step`` arrived (a tool step, or the final text)."""

    def call_started(self, call: Call) -> None:
        """The harness begins to execute ``call`` (hooks have allowed it)."""

    def call_finished(self, outcome: Outcome) -> None:
        """``call`` has a result (executed, denied or stopped by a hook)."""

    def step_done(self, step: Step, outcomes: Sequence[Outcome]) -> None:
        """All calls of ``step`` have results."""

    def finish(self, ending: Ending) -> int:
        """The run's last lines; returns the CLI's own exit status for that ending."""


RendererFactory = Callable[[Context, LineWriter], Renderer]


def renderer_for(fmt: str, ctx: Context, out: LineWriter) -> Renderer:
    module = importlib.import_module(f"tether.testing.scripted_agent.{fmt.replace('-', '_')}")
    factory: RendererFactory = module.Renderer
    return factory(ctx, out)


def step_detector(fmt: str) -> Callable[[bytes], bool]:
    """A fresh predicate telling which recorded line starts a new model step (for pacing)."""
    module = importlib.import_module(f"tether.testing.scripted_agent.{fmt.replace('-', '_')}")
    make: Callable[[], Callable[[bytes], bool]] = module.step_detector
    return make()
