"""Codex's ``codex exec --json`` stream, plus its rollout file.

Stream templates follow tests/transcripts/codex/five-steps.jsonl (codex-cli
0.171.0): ``thread.started``, the non-fatal ``error`` *item* about unknown
model metadata, ``turn.started``, ``item.started``/``item.completed`` per
command (run one after another), an ``agent_message`` item, ``turn.completed``.

The stream has no per-model-call event, so tether counts Codex iterations from
the rollout file. It is written where Codex writes it,
``$CODEX_HOME`` (or ``~/.codex``) ``/sessions/YYYY/MM/DD/rollout-<ts>-<id>.jsonl``,
flushed line by line, with one ``token_usage_record`` per completed model
response (see :mod:`tether.testing.scripted_agent.codex_rollout`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

from tether.testing.scripted_agent.codex_rollout import Rollout
from tether.testing.scripted_agent.emit import LineWriter
from tether.testing.scripted_agent.plan import TODOS, Call, Step
from tether.testing.scripted_agent.render import Context, Ending, Outcome

PLAN_RESULT = "Plan updated"


class Renderer:
    id_prefix = "call"
    todo_output = PLAN_RESULT

    def __init__(self, ctx: Context, out: LineWriter) -> None:
        self.ctx = ctx
        self.out = out
        self.rollout = Rollout(ctx)
        self.next_item = 1
        self.items: dict[str, str] = {}  # call id -> item id
        self.todo_item: str | None = None
        self.input_tokens = 0
        self.output_tokens = 0

    def _item_id(self) -> str:
        item = f"item_{self.next_item}"
        self.next_item += 1
        return item

    def begin(self) -> None:
        sys.stderr.write("Reading additional input from stdin...\n")
        sys.stderr.flush()
        self.rollout.begin()
        self.out.line({"type": "thread.started", "thread_id": self.ctx.session_id})
        warning = (
            f"Model metadata for `{self.ctx.model}` not found. Defaulting to fallback "
            "metadata; this can degrade performance and cause issues."
        )
        self.out.line(
            {
                "type": "item.completed",
                "item": {"id": "item_0", "type": "error", "message": warning},
            }
        )
        self.out.line({"type": "turn.started"})

    def step_requested(self, number: int) -> None:
        pass

    def model_step(self, step: Step) -> None:
        tokens = 10300 + 100 * step.number
        self.input_tokens += tokens
        self.output_tokens += 12
        self.rollout.response(step, tokens, 12)
        if step.kind == "final":
            item = {"id": self._item_id(), "type": "agent_message", "text": step.text}
            self.out.line({"type": "item.completed", "item": item})
            return
        for call in step.calls:
            if call.kind == "todo":
                self.todo_item = self._item_id()
                self.out.line({"type": "item.started", "item": self._todo_item(done=1)})

    def _todo_item(self, done: int) -> dict[str, Any]:
        items = [{"text": text, "completed": i < done} for i, (text, _s) in enumerate(TODOS)]
        return {"id": self.todo_item, "type": "todo_list", "items": items}

    def call_started(self, call: Call) -> None:
        if call.kind == "todo":
            return
        item = self._item_id()
        self.items[call.call_id] = item
        self.out.line(
            {"type": "item.started", "item": _command(item, call, "", None, "in_progress")}
        )

    def call_finished(self, outcome: Outcome) -> None:
        call = outcome.call
        self.rollout.call_output(outcome)
        if call.kind == "todo":
            return
        item = self.items.pop(call.call_id)
        status = {
            "completed": "failed" if outcome.is_error else "completed",
            "denied": "declined",
            "stopped": "declined",
        }[outcome.status]
        aggregated = outcome.output if outcome.status == "completed" else ""
        line = _command(item, call, aggregated, outcome.exit_code, status)
        self.out.line({"type": "item.completed", "item": line})

    def step_done(self, step: Step, outcomes: Sequence[Outcome]) -> None:
        self.rollout.token_count()

    def finish(self, ending: Ending) -> int:
        if ending.kind in ("failed", "max_turns"):
            self.out.line({"type": "error", "message": ending.message})
            self.out.line({"type": "turn.failed", "error": {"message": ending.message}})
            self.rollout.error(ending.message)
            return 1
        if self.todo_item is not None:
            self.out.line({"type": "item.completed", "item": self._todo_item(done=1)})
        usage = {
            "input_tokens": self.input_tokens,
            "cached_input_tokens": 0,
            "cache_write_input_tokens": 0,
            "output_tokens": self.output_tokens,
            "reasoning_output_tokens": 0,
        }
        self.out.line({"type": "turn.completed", "usage": usage})
        self.rollout.complete(ending.final_text or ending.message)
        return 0


def _command(
    item: str, call: Call, output: str, exit_code: int | None, status: str
) -> dict[str, Any]:
    return {
        "id": item,
        "type": "command_execution",
        "command": shell_command(call.command),
        "aggregated_output": output,
        "exit_code": exit_code,
        "status": status,
    }


def shell_command(command: str) -> str:
    """How Codex shows a command it runs: ``/bin/bash -lc 'echo step 1'``."""
    return "/bin/bash -lc '" + command.replace("'", "'\\''") + "'"


def step_detector() -> Callable[[bytes], bool]:
    def starts_step(line: bytes) -> bool:
        return b'"type":"item.started"' in line

    return starts_step
