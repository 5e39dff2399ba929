"""What the fake model "decides": a sequence of model steps.

A step is one model response. A tool step asks for ``K`` shell calls
(``echo step S`` or ``echo step Sa``, ``Sb``, … when ``K > 1``); the final step
is the text ``All N steps done.``. With ``--todo`` the first step is a todo-list
update instead (Claude Code ``TodoWrite``, Codex ``update_plan``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from tether.testing.scripted_agent.emit import hex_id

CallKind = Literal["shell", "todo"]
StepKind = Literal["tools", "final", "fail"]

TODOS: tuple[tuple[str, str], ...] = (
    ("Read the task", "completed"),
    ("Run the scripted steps", "in_progress"),
    ("Report the result", "pending"),
)


@dataclass(frozen=True)
class Call:
    step: int
    index: int  # 1-based within its step
    call_id: str
    kind: CallKind
    command: str = ""

    @property
    def argv(self) -> list[str]:
        return self.command.split()

    @property
    def hook_tool_name(self) -> str:
        """The tool's name in Claude Code terms (what hook payloads carry)."""
        return "TodoWrite" if self.kind == "todo" else "Bash"

    def hook_tool_input(self) -> dict[str, Any]:
        if self.kind == "todo":
            return todo_input()
        return {"command": self.command, "description": f"scripted step {self.step}"}


@dataclass(frozen=True)
class Step:
    number: int
    kind: StepKind
    calls: tuple[Call, ...] = ()
    text: str = ""
    message_id: str = field(default_factory=lambda: hex_id(16))


def todo_input() -> dict[str, Any]:
    return {
        "todos": [{"content": text, "status": status, "activeForm": text} for text, status in TODOS]
    }


def call_id(prefix: str, step: int, index: int) -> str:
    return f"{prefix}_scripted_s{step}_c{index}_{hex_id(8)}"


def _suffix(index: int, per_step: int) -> str:
    if per_step == 1:
        return ""
    letters = "abcdefghijklmnopqrstuvwxyz"
    n = index - 1
    out = ""
    while True:
        out = letters[n % 26] + out
        n = n // 26 - 1
        if n < 0:
            return out


def steps(
    *,
    total: int | None,
    calls_per_step: int,
    todo: bool,
    fail: bool,
    id_prefix: str,
    commands: Sequence[str] | None = None,
) -> Iterator[Step]:
    """The model's steps; ``total=None`` never ends (``--forever``).

    With ``commands`` (``--commands-file``) tool step S runs ``commands[S-1]`` as its
    one call instead of ``echo step S``.
    """
    number = 0
    while True:
        number += 1
        if total is not None and number >= total:
            if fail:
                yield Step(number, "fail")
            else:
                done = f"All {total} steps done."
                yield Step(number, "final", text=done)
            return
        if commands is not None and number <= len(commands):
            calls: tuple[Call, ...] = (
                Call(number, 1, call_id(id_prefix, number, 1), "shell", commands[number - 1]),
            )
        elif todo and number == 1:
            calls = (Call(1, 1, call_id(id_prefix, 1, 1), "todo"),)
        else:
            calls = tuple(
                Call(
                    number,
                    i,
                    call_id(id_prefix, number, i),
                    "shell",
                    f"echo step {number}{_suffix(i, calls_per_step)}",
                )
                for i in range(1, calls_per_step + 1)
            )
        yield Step(number, "tools", calls=calls)
