"""The agent loop: think, answer, run the tools, ask the hooks, repeat.

Only the model is fake. Tool calls are real subprocesses (``echo``), hooks are
real commands fed Claude Code's payloads, signals are real signals. The order
of things follows the real CLIs: a step's tool calls run one after another,
each after its ``PreToolUse`` hooks; ``PostToolBatch`` runs once all of a
step's calls have results and before the next model request.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from tether.testing.scripted_agent import plan
from tether.testing.scripted_agent.emit import AppendLog, LineWriter, new_uuid, write_atomic
from tether.testing.scripted_agent.hooks import (
    HookConfig,
    HookRunner,
    SettingsError,
    transcript_path,
)
from tether.testing.scripted_agent.options import Options, parse
from tether.testing.scripted_agent.plan import Call, Step
from tether.testing.scripted_agent.render import Context, Ending, Outcome, Renderer, renderer_for

EXIT_SIGTERM = 143
EXIT_SIGINT = 130
# Formats whose CLI has a todo/plan tool the ``--todo`` step can use.
TODO_FORMATS = ("claude-code", "codex")
_children: list[subprocess.Popen[bytes]] = []


def main(argv: Sequence[str] | None = None) -> int:
    opts = parse(sys.argv[1:] if argv is None else argv)
    try:
        hook_config = HookConfig.load(opts.settings)
    except SettingsError as exc:
        sys.stderr.write(f"scripted agent: {exc}\n")
        return 2
    if opts.replay is not None and not opts.replay.is_file():
        sys.stderr.write(f"scripted agent: no such transcript to replay: {opts.replay}\n")
        return 2
    _install_signals(opts.ignore_sigterm)
    if opts.prompt_log is not None:
        write_atomic(opts.prompt_log, opts.prompt)
    if opts.spawn_child:
        _spawn_child(opts)
    if opts.silent:
        hang()
    if opts.replay is not None:
        from tether.testing.scripted_agent.replay import replay

        return replay(opts)
    return Agent(opts, hook_config).run()


def _install_signals(ignore_sigterm: bool) -> None:
    # A Python-level no-op handler (not SIG_IGN) so that children, which exec
    # and so reset handled signals to their default, still die of SIGTERM.
    if ignore_sigterm:
        signal.signal(signal.SIGTERM, lambda _s, _f: None)
    else:
        signal.signal(signal.SIGTERM, lambda _s, _f: os._exit(EXIT_SIGTERM))
    signal.signal(signal.SIGINT, lambda _s, _f: os._exit(EXIT_SIGINT))


def _spawn_child(opts: Options) -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(3600)"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _children.append(child)  # keep it referenced: it must outlive this object
    if opts.child_pid_file is not None:
        write_atomic(opts.child_pid_file, f"{child.pid}\n")


def hang() -> NoReturn:
    while True:
        signal.pause()


class Agent:
    def __init__(self, opts: Options, hook_config: HookConfig) -> None:
        self.opts = opts
        cwd = str(Path.cwd())
        env = dict(os.environ)
        self.ctx = Context(
            session_id=opts.session_id or new_uuid(),
            model=opts.model,
            prompt=opts.prompt,
            cwd=cwd,
            env=env,
            max_turns=opts.max_turns,
        )
        self.hook_config = hook_config
        self.hooks = HookRunner(hook_config, cwd=cwd, env=env)
        self.exec_log = AppendLog(opts.exec_log)
        self.denials: list[Call] = []
        self.steps_done = 0

    def run(self) -> int:
        opts = self.opts
        r = renderer_for(opts.format, self.ctx, LineWriter())
        r.begin()
        script = plan.steps(
            total=opts.steps,
            calls_per_step=opts.calls_per_step,
            todo=opts.todo and opts.format in TODO_FORMATS,
            fail=opts.fail,
            id_prefix=r.id_prefix,
            commands=opts.commands,
        )
        for step in script:
            if opts.max_turns is not None and step.number > opts.max_turns:
                cap = f"Reached maximum number of turns ({opts.max_turns})"
                return self._end(r, "max_turns", message=cap)
            r.step_requested(step.number)
            if opts.step_delay:
                time.sleep(opts.step_delay)
            if step.kind == "fail":
                return self._end(r, "failed", message="scripted model failure (--fail)")
            r.model_step(step)
            self.steps_done = step.number
            if step.kind == "final":
                return self._end(r, "completed", final_text=step.text)
            stopped = self._run_calls(r, step)
            if stopped is not None:
                return self._end(r, "hook_stopped", message=stopped)
        raise AssertionError("the script ended without a final step")  # pragma: no cover

    def _run_calls(self, r: Renderer, step: Step) -> str | None:
        """Run a tool step's calls and its batch hooks; a stop reason if a hook stopped the run."""
        outcomes: list[Outcome] = []
        for call in step.calls:
            verdict = None
            if self.hook_config.pre_tool_use:
                verdict = self.hooks.pre_tool_use(call.hook_tool_name, self._pre_payload(call))
            if verdict is not None and verdict.stop:
                reason = verdict.stop_reason or ""
                text = f"Execution stopped by PreToolUse hook: {reason}".rstrip(": ")
                outcome = Outcome(call, text, is_error=True, status="stopped", exit_code=None)
                r.call_started(call)
                r.call_finished(outcome)
                outcomes.append(outcome)
                r.step_done(step, outcomes)
                return reason
            r.call_started(call)
            if verdict is not None and verdict.deny:
                self.denials.append(call)
                outcome = Outcome(
                    call, verdict.reason or "", is_error=True, status="denied", exit_code=None
                )
            else:
                if self.opts.hang_before_result == step.number:
                    hang()
                outcome = self._execute(call, r)
            r.call_finished(outcome)
            outcomes.append(outcome)
        r.step_done(step, outcomes)
        if self.hook_config.post_tool_batch:
            verdict = self.hooks.post_tool_batch(self._batch_payload(outcomes))
            if verdict.stop:
                return verdict.stop_reason or ""
        return None

    def _execute(self, call: Call, r: Renderer) -> Outcome:
        self.exec_log.write(f"step {call.step} call {call.index} {call.call_id}")
        if self.opts.tool_delay:
            time.sleep(self.opts.tool_delay)
        if call.kind == "todo":
            return Outcome(call, r.todo_output)
        try:
            done = subprocess.run(
                shlex.split(call.command), capture_output=True, cwd=self.ctx.cwd, check=False
            )
        except OSError as exc:
            return Outcome(call, f"{exc}\n", is_error=True, exit_code=127)
        output = (done.stdout + done.stderr).decode("utf-8", "replace")
        return Outcome(call, output, is_error=done.returncode != 0, exit_code=done.returncode)

    def _end(self, r: Renderer, kind: Any, *, message: str = "", final_text: str = "") -> int:
        ending = Ending(
            kind=kind,
            message=message,
            final_text=final_text,
            steps=self.steps_done,
            denials=tuple(self.denials),
        )
        code = r.finish(ending)
        if self.opts.stderr:  # what a failing CLI says on stderr (a missing key, ...)
            sys.stderr.write(self.opts.stderr.rstrip("\n") + "\n")
            sys.stderr.flush()
        if self.opts.stderr_flood:
            _flood_stderr(self.opts.stderr_flood)
        return self.opts.exit_code if self.opts.exit_code is not None else code

    def _common_payload(self, event: str) -> dict[str, Any]:
        ctx = self.ctx
        return {
            "session_id": ctx.session_id,
            "transcript_path": transcript_path(ctx.session_id, ctx.cwd, ctx.env),
            "cwd": ctx.cwd,
            "permission_mode": "default",
            "hook_event_name": event,
        }

    def _pre_payload(self, call: Call) -> dict[str, Any]:
        payload = self._common_payload("PreToolUse")
        payload["tool_name"] = call.hook_tool_name
        payload["tool_input"] = call.hook_tool_input()
        payload["tool_use_id"] = call.call_id
        return payload

    def _batch_payload(self, outcomes: Sequence[Outcome]) -> dict[str, Any]:
        payload = self._common_payload("PostToolBatch")
        payload["tool_calls"] = [
            {
                "tool_name": o.call.hook_tool_name,
                "tool_input": o.call.hook_tool_input(),
                "tool_use_id": o.call.call_id,
                "tool_response": o.output.rstrip("\n"),
            }
            for o in outcomes
        ]
        return payload


def _flood_stderr(size: int) -> None:
    """The stream is over (stdout closed), yet the agent writes ``size`` bytes on stderr."""
    sys.stdout.flush()
    quiet = os.open(os.devnull, os.O_WRONLY)
    os.dup2(quiet, sys.stdout.fileno())  # the stream's pipe is closed: its reader sees the end
    os.close(quiet)
    chunk = b"x" * 65536
    while size > 0:
        size -= os.write(sys.stderr.fileno(), chunk[:size])
