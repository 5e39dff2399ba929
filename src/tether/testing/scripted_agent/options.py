"""The scripted agent's command line."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

FORMATS = ("claude-code", "codex", "copilot", "pi")
DEFAULT_STEPS = 5


@dataclass(frozen=True)
class Options:
    prompt: str
    format: str = "claude-code"
    steps: int | None = DEFAULT_STEPS  # None: --forever
    replay: Path | None = None
    calls_per_step: int = 1
    exec_log: Path | None = None
    step_delay: float = 0.0
    tool_delay: float = 0.0
    hang_before_result: int | None = None
    silent: bool = False
    ignore_sigterm: bool = False
    spawn_child: bool = False
    child_pid_file: Path | None = None
    exit_code: int | None = None
    fail: bool = False
    stderr: str | None = None  # printed on stderr at the end
    stderr_flood: int | None = None  # bytes of stderr after closing stdout, at the end
    todo: bool = False
    session_id: str | None = None
    max_turns: int | None = None
    model: str = "scripted-model"
    prompt_log: Path | None = None
    settings: Path | None = None
    commands: tuple[str, ...] | None = None  # --commands-file: one shell command per tool step


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _seconds(text: str) -> float:
    value = float(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative, got {value}")
    return value


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m tether.harnesses.scripted",
        description=(
            "A real agent process that fakes only the model: it prints a harness's "
            "JSONL event stream, really runs its tool calls and honours Claude Code "
            "style hooks. See docs/reference/scripted-harness.md."
        ),
    )
    p.add_argument("prompt", metavar="PROMPT", help="the task prompt (recorded, not read)")
    p.add_argument("--format", choices=FORMATS, default="claude-code")
    source = p.add_mutually_exclusive_group()
    source.add_argument("--steps", type=_positive, metavar="N", help="N model steps (default 5)")
    source.add_argument("--forever", action="store_true", help="tool steps without end")
    source.add_argument("--replay", type=Path, metavar="FILE", help="print a recorded stream")
    source.add_argument(
        "--commands-file",
        type=Path,
        metavar="FILE",
        help="one command per line (run as argv, no shell), one per tool step, then a final step",
    )
    p.add_argument("--calls-per-step", type=_positive, default=1, metavar="K")
    p.add_argument("--exec-log", type=Path, metavar="FILE")
    p.add_argument("--step-delay", type=_seconds, default=0.0, metavar="SECONDS")
    p.add_argument("--tool-delay", type=_seconds, default=0.0, metavar="SECONDS")
    p.add_argument("--hang-before-result", type=_positive, metavar="STEP")
    p.add_argument("--silent", action="store_true", help="print nothing and hang")
    p.add_argument("--ignore-sigterm", action="store_true")
    p.add_argument("--spawn-child", action="store_true")
    p.add_argument("--child-pid-file", type=Path, metavar="FILE")
    p.add_argument("--exit-code", type=int, metavar="N")
    p.add_argument("--fail", action="store_true", help="end in the harness's failure form")
    p.add_argument("--stderr", metavar="TEXT", help="print TEXT on stderr at the end")
    p.add_argument(
        "--stderr-flood",
        type=_positive,
        metavar="BYTES",
        help="at the end, close stdout, then write BYTES on stderr before exiting",
    )
    p.add_argument("--todo", action="store_true", help="step 1 updates a todo list")
    p.add_argument("--session-id", metavar="ID")
    p.add_argument("--max-turns", type=_positive, metavar="N")
    p.add_argument("--model", default="scripted-model", metavar="NAME")
    p.add_argument("--prompt-log", type=Path, metavar="FILE")
    p.add_argument("--settings", type=Path, metavar="FILE", help="Claude Code settings (hooks)")
    return p


def _read_commands(p: argparse.ArgumentParser, path: Path) -> tuple[str, ...]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        p.error(f"cannot read --commands-file {path}: {exc.strerror}")
    lines = [line.strip() for line in text.splitlines()]
    return tuple(line for line in lines if line and not line.startswith("#"))


def parse(argv: Sequence[str]) -> Options:
    p = parser()
    ns = p.parse_args(list(argv))
    commands = None if ns.commands_file is None else _read_commands(p, ns.commands_file)
    if ns.forever or ns.replay is not None:
        steps = None
    elif commands is not None:
        steps = len(commands) + 1
    else:
        steps = ns.steps if ns.steps is not None else DEFAULT_STEPS
    return Options(
        prompt=ns.prompt,
        format=ns.format,
        steps=steps,
        replay=ns.replay,
        calls_per_step=ns.calls_per_step,
        exec_log=ns.exec_log,
        step_delay=ns.step_delay,
        tool_delay=ns.tool_delay,
        hang_before_result=ns.hang_before_result,
        silent=ns.silent,
        ignore_sigterm=ns.ignore_sigterm,
        spawn_child=ns.spawn_child,
        child_pid_file=ns.child_pid_file,
        exit_code=ns.exit_code,
        fail=ns.fail,
        stderr=ns.stderr,
        stderr_flood=ns.stderr_flood,
        todo=ns.todo,
        session_id=ns.session_id,
        max_turns=ns.max_turns,
        model=ns.model,
        prompt_log=ns.prompt_log,
        settings=ns.settings,
        commands=commands,
    )
