"""The scripted harness: a real agent process that fakes only the model.

Every test runs the agent as a real subprocess (``python -m
tether.harnesses.scripted``) and reads what it printed through the adapter of
the harness whose format it speaks. Waiting is polling with a deadline.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import queue
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tether.core.errors import UnknownNameError
from tether.events.accounting import Ledger
from tether.events.counting import count_stream
from tether.harnesses import get_harness
from tether.harnesses.base import Harness, RunSpec
from tether.harnesses.scripted import ScriptedHarness, format_of

AGENT = (sys.executable, "-m", "tether.harnesses.scripted")
FORMATS = ("claude-code", "codex", "copilot", "pi")
SID = "0b5c2d7e-1f3a-4c5d-8e9f-a1b2c3d4e5f6"
TRANSCRIPTS = Path(__file__).resolve().parents[1] / "transcripts"
DEADLINE = 20.0


def adapter(fmt: str) -> Harness:
    """The bound scripted adapter for ``fmt``."""
    return ScriptedHarness().bind(RunSpec(prompt="x", extra_args=("--format", fmt)))


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir()
    return {
        **os.environ,
        "HOME": str(home),
        "CODEX_HOME": str(home / ".codex"),
        "TETHER_PROBE": "passed through untouched",
    }


@pytest.fixture
def work(tmp_path: Path) -> Path:
    cwd = tmp_path / "work"
    cwd.mkdir()
    return cwd


def run(
    args: list[str], env: dict[str, str], cwd: Path, prompt: str = "Run the scripted steps."
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [*AGENT, *args, "--", prompt], capture_output=True, env=env, cwd=cwd, timeout=60
    )


def ledger(fmt: str, stdout: bytes, env: dict[str, str] | None = None) -> Ledger:
    harness = adapter(fmt)
    session = None
    if harness.iteration_source == "session_file":
        path = harness.session_file(SID, env or {})
        if path is not None and path.is_file():  # not yet there while the agent starts
            session = path.open("rb")
    try:
        return count_stream(harness, io.BytesIO(stdout), session)
    finally:
        if session is not None:
            session.close()


def objects(stdout: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines()]


def poll(check: Callable[[], bool], what: str, timeout: float = DEADLINE) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.005)


class Live:
    """A running agent in its own process group, its stdout collected line by line."""

    def __init__(self, args: list[str], env: dict[str, str], cwd: Path) -> None:
        self.env = env
        self.proc = subprocess.Popen(
            [*AGENT, *args, "--", "go"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd=cwd,
            start_new_session=True,
        )
        self.lines: list[bytes] = []
        self._queue: queue.Queue[bytes | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._queue.put(line)
        self._queue.put(None)

    def _drain(self) -> bool:
        """Move what was read into ``lines``; False once stdout is closed."""
        while True:
            try:
                line = self._queue.get_nowait()
            except queue.Empty:
                return True
            if line is None:
                return False
            self.lines.append(line)

    def wait_lines(self, n: int) -> None:
        def enough() -> bool:
            open_ = self._drain()
            if len(self.lines) < n and not open_:
                raise AssertionError(f"stdout closed after {len(self.lines)} lines")
            return len(self.lines) >= n

        poll(enough, f"{n} lines")

    def wait_for(self, check: Callable[[list[bytes]], bool], what: str) -> None:
        poll(lambda: (self._drain() or True) and check(self.lines), what)

    def finish(self) -> int:
        code = self.proc.wait(timeout=DEADLINE)
        self._reader.join(timeout=DEADLINE)
        self._drain()
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        return code

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.finish()


@pytest.fixture
def live(env: dict[str, str], work: Path) -> Iterator[Callable[..., Live]]:
    started: list[Live] = []

    def start(*args: str) -> Live:
        agent = Live(list(args), env, work)
        started.append(agent)
        return agent

    yield start
    for agent in started:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(agent.proc.pid, signal.SIGKILL)
        agent.finish()


# -- every format through its adapter -------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_counts_exactly_through_its_adapter(
    fmt: str, env: dict[str, str], work: Path
) -> None:
    done = run(
        ["--format", fmt, "--steps", "7", "--calls-per-step", "2", "--session-id", SID], env, work
    )
    assert done.returncode == 0, done.stderr
    got = ledger(fmt, done.stdout, env)
    assert got.iterations == 7
    assert got.tool_calls == 12  # 6 tool steps x 2 calls
    assert got.tool_results == 12
    assert got.open_tool_calls == 0
    assert got.tool_errors == 0
    assert got.malformed_lines == 0
    assert got.unknown_lines == 0
    assert got.session_id == SID
    assert got.final_status == "success"
    assert got.iteration_source == ("session_file" if fmt == "codex" else "stream")


@pytest.mark.parametrize("fmt", FORMATS)
def test_hang_before_result_leaves_one_open_call(
    fmt: str, live: Callable[..., Live], tmp_path: Path
) -> None:
    exec_log = tmp_path / "exec.log"
    agent = live(
        "--format", fmt, "--steps", "5", "--hang-before-result", "3",
        "--exec-log", str(exec_log), "--session-id", SID,
    )  # fmt: skip

    def stuck_in_step_3(lines: list[bytes]) -> bool:
        return ledger(fmt, b"".join(lines), agent.env).tool_calls == 3

    agent.wait_for(stuck_in_step_3, "step 3's tool call")
    got = ledger(fmt, b"".join(agent.lines), agent.env)
    assert got.iteration_source != "bound"
    assert got.iterations == 3
    assert got.tool_results == 2
    assert got.open_tool_calls == 1
    assert agent.proc.poll() is None
    assert [line.split()[1] for line in exec_log.read_text().splitlines()] == ["1", "2"]


# -- the stream is the real CLI's, line for line ----------------------------------------


def _paths(value: Any, prefix: str = "") -> set[str]:
    """Key paths of a JSON value; lists merge their items; model-keyed maps are leaves."""
    out: set[str] = set()
    if isinstance(value, dict):
        for key, item in value.items():
            path = f"{prefix}.{key}" if prefix else key
            out.add(path)
            if key not in ("modelUsage", "model_usage_since_last_result"):
                out |= _paths(item, path)
    elif isinstance(value, list):
        for item in value:
            out |= _paths(item, prefix + "[]")
    return out


def _kind(fmt: str, obj: dict[str, Any]) -> str:
    kind = str(obj.get("type"))
    if fmt == "claude-code" and obj.get("subtype"):
        kind += "/" + str(obj["subtype"])
    if fmt == "codex" and isinstance(obj.get("item"), dict):
        kind += "/" + str(obj["item"].get("type"))
    if fmt == "pi" and isinstance(obj.get("message"), dict):
        kind += "/" + str(obj["message"].get("role"))
    return kind


def _shapes(fmt: str, lines: list[dict[str, Any]]) -> dict[str, set[str]]:
    shapes: dict[str, set[str]] = {}
    for obj in lines:
        shapes.setdefault(_kind(fmt, obj), set()).update(_paths(obj))
    return shapes


@pytest.mark.parametrize("fmt", FORMATS)
def test_lines_have_the_recorded_fields_nesting_and_order(
    fmt: str, env: dict[str, str], work: Path
) -> None:
    done = run(["--format", fmt, "--steps", "5", "--calls-per-step", "2"], env, work)
    assert done.returncode == 0, done.stderr
    mine = objects(done.stdout)
    recorded = objects((TRANSCRIPTS / fmt / "five-steps.jsonl").read_bytes())
    recorded_shapes = _shapes(fmt, recorded)
    for kind, paths in _shapes(fmt, mine).items():
        assert kind in recorded_shapes, f"{kind} never appears in the recording"
        assert paths == recorded_shapes[kind], kind
    # Top-level key order per kind is the CLI's own.
    first_order = {_kind(fmt, o): list(o) for o in reversed(recorded)}
    for obj in mine:
        assert list(obj) == first_order[_kind(fmt, obj)], _kind(fmt, obj)


def test_codex_rollout_is_where_codex_writes_it(env: dict[str, str], work: Path) -> None:
    done = run(
        ["--format", "codex", "--steps", "5", "--calls-per-step", "2", "--session-id", SID],
        env,
        work,
    )
    assert done.returncode == 0, done.stderr
    found = list(Path(env["CODEX_HOME"]).glob(f"sessions/*/*/*/rollout-*-{SID}.jsonl"))
    assert len(found) == 1
    records = objects(found[0].read_bytes())
    kinds = [(r["type"], r["payload"].get("type")) for r in records]
    assert kinds[0] == ("session_meta", None)
    assert kinds.count(("token_usage_record", None)) == 5
    assert kinds.count(("response_item", "function_call")) == 8
    assert kinds.count(("response_item", "function_call_output")) == 8
    assert [r["ordinal"] for r in records] == list(range(len(records)))
    recorded = objects((TRANSCRIPTS / "codex" / "five-steps.session.jsonl").read_bytes())
    recorded_kinds = {(r["type"], r["payload"].get("type")) for r in recorded}
    assert set(kinds) <= recorded_kinds
    usage = next(r for r in records if r["type"] == "token_usage_record")
    usage_recorded = next(r for r in recorded if r["type"] == "token_usage_record")
    assert _paths(usage) == _paths(usage_recorded)
    assert b"Reading additional input from stdin..." in done.stderr


@pytest.mark.parametrize("fmt", FORMATS)
def test_replay_prints_a_recording_byte_for_byte(fmt: str, env: dict[str, str], work: Path) -> None:
    recording = TRANSCRIPTS / fmt / "five-steps.jsonl"
    done = run(["--format", fmt, "--replay", str(recording), "--step-delay", "0.001"], env, work)
    assert done.returncode == 0, done.stderr
    assert done.stdout == recording.read_bytes()


def test_replayed_claude_recording_counts_as_recorded(env: dict[str, str], work: Path) -> None:
    recording = TRANSCRIPTS / "claude-code" / "five-steps.jsonl"
    expected = json.loads((TRANSCRIPTS / "claude-code" / "five-steps.expected.json").read_text())
    done = run(["--replay", str(recording)], env, work)
    got = ledger("claude-code", done.stdout)
    assert got.iterations == expected["iterations"] == 5
    assert got.tool_calls == expected["tool_calls"]
    assert got.session_id == expected["session_id"]


# -- what the agent executes ------------------------------------------------------------


def test_exec_log_has_one_line_per_executed_call(
    env: dict[str, str], work: Path, tmp_path: Path
) -> None:
    exec_log = tmp_path / "exec.log"
    exec_log.write_text("earlier line\n")  # appended to, never truncated
    done = run(["--steps", "4", "--calls-per-step", "2", "--exec-log", str(exec_log)], env, work)
    assert done.returncode == 0
    tool_ids = [
        block["id"]
        for o in objects(done.stdout)
        if o["type"] == "assistant"
        for block in o["message"]["content"]
        if block["type"] == "tool_use"
    ]
    steps_calls = [(s, c) for s in (1, 2, 3) for c in (1, 2)]
    assert exec_log.read_text().splitlines() == [
        "earlier line",
        *(f"step {s} call {c} {tid}" for (s, c), tid in zip(steps_calls, tool_ids, strict=True)),
    ]
    results = [
        b["content"] for o in objects(done.stdout) if o["type"] == "user"
        for b in o["message"]["content"]
    ]  # fmt: skip
    assert results == ["step 1a", "step 1b", "step 2a", "step 2b", "step 3a", "step 3b"]


def test_prompt_log_holds_exactly_the_prompt(
    env: dict[str, str], work: Path, tmp_path: Path
) -> None:
    prompt = "--steps 99 is not an option here\nand 'quotes' and ünïcode"
    prompt_log = tmp_path / "prompt.txt"
    done = run(["--prompt-log", str(prompt_log)], env, work, prompt=prompt)
    assert done.returncode == 0, done.stderr
    assert prompt_log.read_text(encoding="utf-8") == prompt
    assert ledger("claude-code", done.stdout).iterations == 5


def test_session_id_and_model_are_echoed(env: dict[str, str], work: Path) -> None:
    done = run(["--session-id", SID, "--model", "tiny-model", "--steps", "1"], env, work)
    init = objects(done.stdout)[0]
    assert (init["type"], init["subtype"]) == ("system", "init")
    assert init["session_id"] == SID
    assert init["model"] == "tiny-model"
    assert init["cwd"] == str(work)


def test_a_fresh_session_id_per_run(env: dict[str, str], work: Path) -> None:
    ids = {ledger("claude-code", run(["--steps", "1"], env, work).stdout).session_id for _ in "ab"}
    assert len(ids) == 2 and None not in ids


def test_max_turns_ends_with_the_harness_own_cap(
    env: dict[str, str], work: Path, tmp_path: Path
) -> None:
    exec_log = tmp_path / "exec.log"
    done = run(["--steps", "10", "--max-turns", "3", "--exec-log", str(exec_log)], env, work)
    assert done.returncode == 1
    result = objects(done.stdout)[-1]
    assert (result["subtype"], result["is_error"]) == ("error_max_turns", True)
    got = ledger("claude-code", done.stdout)
    assert got.iterations == 3
    assert got.final_status == "failure"
    assert got.stop_reason == "max_turns"
    assert len(exec_log.read_text().splitlines()) == 3


@pytest.mark.parametrize(
    ("fmt", "exit_code", "status"),
    [("claude-code", 1, "failure"), ("codex", 1, "failure"), ("copilot", 1, "failure"),
     ("pi", 0, None)],
)  # fmt: skip
def test_fail_ends_in_the_harness_failure_form(
    fmt: str, exit_code: int, status: str | None, env: dict[str, str], work: Path
) -> None:
    done = run(["--format", fmt, "--steps", "3", "--fail", "--session-id", SID], env, work)
    assert done.returncode == exit_code
    got = ledger(fmt, done.stdout, env)
    assert got.tool_calls == got.tool_results == 2
    assert got.malformed_lines == got.unknown_lines == 0
    if status is not None:
        assert got.final_status == status
    if fmt == "claude-code":
        assert objects(done.stdout)[-1]["subtype"] == "error_during_execution"
    if fmt == "codex":
        assert objects(done.stdout)[-1]["type"] == "turn.failed"


def test_exit_code_overrides_the_end_status(env: dict[str, str], work: Path) -> None:
    done = run(["--steps", "2", "--exit-code", "7"], env, work)
    assert done.returncode == 7
    assert ledger("claude-code", done.stdout).final_status == "success"


@pytest.mark.parametrize("fmt", ["claude-code", "codex"])
def test_todo_step_shows_open_points(fmt: str, env: dict[str, str], work: Path) -> None:
    done = run(["--format", fmt, "--steps", "4", "--todo", "--session-id", SID], env, work)
    assert done.returncode == 0, done.stderr
    got = ledger(fmt, done.stdout, env)
    assert [item.done for item in got.plan] == [True, False, False]
    assert got.iterations == 4


# -- hooks, the way Claude Code runs them -----------------------------------------------

HOOK = """
import json, os, pathlib, sys
payload = json.load(sys.stdin)
state, log, mode = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), sys.argv[3]
event = payload["hook_event_name"]
count_file = state / event
n = int(count_file.read_text()) + 1 if count_file.exists() else 1
count_file.write_text(str(n))
record = {"payload": payload, "probe": os.environ.get("TETHER_PROBE"),
          "project": os.environ.get("CLAUDE_PROJECT_DIR"), "cwd": os.getcwd()}
with log.open("a") as fh:
    fh.write(json.dumps(record) + "\\n")
if event == "PreToolUse" and n == 3:
    if mode == "deny-third":
        print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse",
              "permissionDecision": "deny", "permissionDecisionReason": "third call refused"}}))
    elif mode == "exit2-third":
        sys.stderr.write("third call refused\\n")
        sys.exit(2)
    elif mode == "legacy-block-third":
        print(json.dumps({"decision": "block", "reason": "third call refused"}))
    elif mode == "stop-third":
        print(json.dumps({"continue": False, "stopReason": "budget spent"}))
if event == "PostToolBatch" and n == 2:
    if mode == "stop-after-2":
        print(json.dumps({"continue": False, "stopReason": "budget spent"}))
    elif mode == "block-after-2":
        print(json.dumps({"decision": "block", "reason": "budget spent"}))
    elif mode == "exit2-after-2":
        sys.stderr.write("budget spent\\n")
        sys.exit(2)
"""


def hook_settings(tmp_path: Path, mode: str, matcher: str = "*") -> tuple[Path, Path]:
    script = tmp_path / "hook.py"
    script.write_text(HOOK)
    state = tmp_path / "hook-state"
    state.mkdir()
    log = tmp_path / "hook-log.jsonl"
    command = shlex.join([sys.executable, str(script), str(state), str(log), mode])
    hook = {"hooks": [{"type": "command", "command": command}]}
    settings = {"hooks": {"PreToolUse": [{"matcher": matcher, **hook}], "PostToolBatch": [hook]}}
    path = tmp_path / "settings.json"
    path.write_text(json.dumps(settings))
    return path, log


@pytest.mark.parametrize("mode", ["deny-third", "exit2-third", "legacy-block-third"])
def test_pre_tool_use_hook_refuses_the_third_call(
    mode: str, env: dict[str, str], work: Path, tmp_path: Path
) -> None:
    settings, _log = hook_settings(tmp_path, mode)
    exec_log = tmp_path / "exec.log"
    done = run(
        ["--steps", "4", "--calls-per-step", "2", "--settings", str(settings),
         "--exec-log", str(exec_log)],
        env, work,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    executed = [line.split()[:4] for line in exec_log.read_text().splitlines()]
    assert [" ".join(x) for x in executed] == [
        "step 1 call 1", "step 1 call 2", "step 2 call 2", "step 3 call 1", "step 3 call 2",
    ]  # fmt: skip
    denied = [
        block for o in objects(done.stdout) if o["type"] == "user"
        for block in o["message"]["content"] if block["is_error"]
    ]  # fmt: skip
    assert len(denied) == 1
    assert denied[0]["content"] == "third call refused"
    assert "_s2_c1_" in denied[0]["tool_use_id"]
    result = objects(done.stdout)[-1]
    assert [d["tool_use_id"] for d in result["permission_denials"]] == [denied[0]["tool_use_id"]]
    got = ledger("claude-code", done.stdout)
    assert (got.iterations, got.tool_calls, got.tool_results, got.tool_errors) == (4, 6, 6, 1)
    assert got.final_status == "success"


def test_hook_payloads_are_claude_codes(env: dict[str, str], work: Path, tmp_path: Path) -> None:
    settings, log = hook_settings(tmp_path, "observe")
    done = run(["--steps", "2", "--session-id", SID, "--settings", str(settings)], env, work)
    assert done.returncode == 0, done.stderr
    records = objects(log.read_bytes())
    pre, batch = records[0]["payload"], records[1]["payload"]
    tool_use = objects(done.stdout)[1]["message"]["content"][0]
    assert pre == {
        "session_id": SID,
        "transcript_path": pre["transcript_path"],
        "cwd": str(work),
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": tool_use["input"],
        "tool_use_id": tool_use["id"],
    }
    assert pre["transcript_path"].endswith(f"/.claude/projects/{_dashed(work)}/{SID}.jsonl")
    assert batch == {
        "session_id": SID,
        "transcript_path": pre["transcript_path"],
        "cwd": str(work),
        "permission_mode": "default",
        "hook_event_name": "PostToolBatch",
        "tool_calls": [
            {
                "tool_name": "Bash",
                "tool_input": tool_use["input"],
                "tool_use_id": tool_use["id"],
                "tool_response": "step 1",
            }
        ],
    }
    for record in records:
        assert record["probe"] == "passed through untouched"
        assert record["project"] == record["cwd"] == str(work)


def _dashed(path: Path) -> str:
    return "".join(c if c.isalnum() else "-" for c in str(path))


def test_pre_tool_use_matcher_selects_tools(
    env: dict[str, str], work: Path, tmp_path: Path
) -> None:
    settings, log = hook_settings(tmp_path, "observe", matcher="Read|Edit")
    done = run(["--steps", "3", "--settings", str(settings)], env, work)
    assert done.returncode == 0
    events = [r["payload"]["hook_event_name"] for r in objects(log.read_bytes())]
    assert events == ["PostToolBatch", "PostToolBatch"]


@pytest.mark.parametrize("mode", ["stop-after-2", "block-after-2", "exit2-after-2"])
def test_post_tool_batch_hook_stops_before_the_next_model_step(
    mode: str, env: dict[str, str], work: Path, tmp_path: Path
) -> None:
    settings, _log = hook_settings(tmp_path, mode)
    exec_log = tmp_path / "exec.log"
    done = run(
        ["--steps", "6", "--settings", str(settings), "--exec-log", str(exec_log)], env, work
    )
    assert done.returncode == 0, done.stderr
    assert [line.split()[1] for line in exec_log.read_text().splitlines()] == ["1", "2"]
    result = objects(done.stdout)[-1]
    assert result["type"] == "result"
    assert result["terminal_reason"] == "hook_stopped"
    assert result["result"] == "budget spent"
    got = ledger("claude-code", done.stdout)
    assert (got.iterations, got.tool_calls, got.open_tool_calls) == (2, 2, 0)


def test_pre_tool_use_continue_false_stops_at_once(
    env: dict[str, str], work: Path, tmp_path: Path
) -> None:
    settings, _log = hook_settings(tmp_path, "stop-third")
    exec_log = tmp_path / "exec.log"
    done = run(
        ["--steps", "6", "--settings", str(settings), "--exec-log", str(exec_log)], env, work
    )
    assert done.returncode == 0, done.stderr
    assert [line.split()[1] for line in exec_log.read_text().splitlines()] == ["1", "2"]
    result = objects(done.stdout)[-1]
    assert (result["terminal_reason"], result["result"]) == ("hook_stopped", "budget spent")
    assert ledger("claude-code", done.stdout).iterations == 3


@pytest.mark.parametrize("fmt", ["codex", "copilot", "pi"])
def test_hooks_work_in_every_format(
    fmt: str, env: dict[str, str], work: Path, tmp_path: Path
) -> None:
    settings, _log = hook_settings(tmp_path, "deny-third")
    exec_log = tmp_path / "exec.log"
    done = run(
        ["--format", fmt, "--steps", "4", "--settings", str(settings), "--session-id", SID,
         "--exec-log", str(exec_log)],
        env, work,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert [line.split()[1] for line in exec_log.read_text().splitlines()] == ["1", "2"]
    got = ledger(fmt, done.stdout, env)
    assert (got.iterations, got.tool_calls, got.tool_results) == (4, 3, 3)
    assert got.unknown_lines == got.malformed_lines == 0


def test_a_bad_settings_file_is_refused_clearly(
    env: dict[str, str], work: Path, tmp_path: Path
) -> None:
    settings = tmp_path / "settings.json"
    settings.write_text('{"hooks": {"PreToolUse": [{"matcher": "*"}]}}')
    done = run(["--settings", str(settings)], env, work)
    assert done.returncode == 2
    assert done.stdout == b""
    assert b"hooks.PreToolUse[0] needs a 'hooks' list" in done.stderr


# -- signals and processes ---------------------------------------------------------------


def test_sigterm_ends_the_agent_with_143_and_whole_lines(live: Callable[..., Live]) -> None:
    agent = live("--forever", "--step-delay", "0.01")
    agent.wait_lines(4)
    agent.proc.send_signal(signal.SIGTERM)
    assert agent.finish() == 143
    assert all(line.endswith(b"\n") for line in agent.lines)
    assert not any(json.loads(line)["type"] == "result" for line in agent.lines)


def test_ignore_sigterm_survives_sigterm_and_dies_on_sigkill(live: Callable[..., Live]) -> None:
    agent = live("--forever", "--ignore-sigterm", "--step-delay", "0.01")
    agent.wait_lines(3)
    agent.proc.send_signal(signal.SIGTERM)
    seen = len(agent.lines)
    agent.wait_lines(seen + 6)  # still stepping after the SIGTERM
    assert agent.proc.poll() is None
    agent.proc.send_signal(signal.SIGKILL)
    assert agent.finish() == -signal.SIGKILL


def test_spawn_child_writes_a_live_pid_in_the_same_group(
    live: Callable[..., Live], tmp_path: Path
) -> None:
    pid_file = tmp_path / "child.pid"
    agent = live(
        "--spawn-child", "--child-pid-file", str(pid_file), "--forever", "--step-delay", "0.05"
    )
    poll(pid_file.exists, "the child pid file")
    child = int(pid_file.read_text())
    os.kill(child, 0)  # alive
    assert os.getpgid(child) == os.getpgid(agent.proc.pid) == agent.proc.pid
    os.killpg(agent.proc.pid, signal.SIGKILL)
    agent.finish()
    poll(lambda: not _running(child), "the child to die with its group")


def test_spawn_child_outlives_a_normal_end(env: dict[str, str], work: Path, tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    proc = subprocess.run(
        [*AGENT, "--spawn-child", "--child-pid-file", str(pid_file), "--steps", "1", "--", "go"],
        capture_output=True, env=env, cwd=work, timeout=60, start_new_session=True,
    )  # fmt: skip
    child = int(pid_file.read_text())
    try:
        assert proc.returncode == 0
        assert _running(child)  # left behind for the supervisor to reap
    finally:
        os.kill(child, signal.SIGKILL)


def _running(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_silent_prints_nothing_and_hangs(live: Callable[..., Live], tmp_path: Path) -> None:
    prompt_log = tmp_path / "prompt.txt"
    agent = live("--silent", "--prompt-log", str(prompt_log))
    poll(prompt_log.exists, "the agent to start")
    assert agent.proc.poll() is None
    agent.proc.send_signal(signal.SIGTERM)
    assert agent.finish() == 143
    assert agent.lines == []


# -- the adapter ------------------------------------------------------------------------


def test_build_command_runs_the_agent_module() -> None:
    spec = RunSpec(
        prompt="-do the thing",
        model="m1",
        extra_args=("--format", "codex", "--steps", "3"),
        session_id=SID,
        max_turns=4,
        settings_path=Path("/tmp/s.json"),
    )
    argv = ScriptedHarness().build_command(spec)
    assert argv == [
        sys.executable, "-m", "tether.harnesses.scripted", "--format", "codex", "--steps", "3",
        "--model", "m1", "--session-id", SID, "--max-turns", "4", "--settings", "/tmp/s.json",
        "--", "-do the thing",
    ]  # fmt: skip
    assert not any("resume" in arg or arg == "--continue" for arg in argv)


def test_registry_and_class_facts() -> None:
    harness = get_harness("scripted")
    assert isinstance(harness, ScriptedHarness)
    assert harness.name == "scripted"
    assert harness.executable == sys.executable
    assert harness.accepts_session_id and harness.has_turn_cap
    assert isinstance(harness, Harness)


@pytest.mark.parametrize(
    ("args", "fmt", "source"),
    [
        ((), "claude-code", "stream"),
        (("--format", "codex"), "codex", "session_file"),
        (("--steps", "2", "--format=pi"), "pi", "stream"),
        (("--format", "copilot"), "copilot", "stream"),
    ],
)  # fmt: skip
def test_bind_follows_the_format(args: tuple[str, ...], fmt: str, source: str) -> None:
    assert format_of(args) == fmt
    bound = ScriptedHarness().bind(RunSpec(prompt="x", extra_args=args))
    assert bound.format == fmt
    assert bound.iteration_source == source
    assert bound.name == "scripted"
    assert bound.build_command(RunSpec(prompt="x", extra_args=args))[3:-2] == list(args)


def test_bind_refuses_an_unknown_format() -> None:
    with pytest.raises(UnknownNameError, match="claude-code"):
        ScriptedHarness().bind(RunSpec(prompt="x", extra_args=("--format", "claude")))


def test_plain_instance_reads_claude_code() -> None:
    line = (TRANSCRIPTS / "claude-code" / "five-steps.jsonl").read_bytes().splitlines()[0]
    events = ScriptedHarness().parse_line(line)
    assert [e.kind for e in events] == ["session_started"]
    assert ScriptedHarness().session_file(SID, {}) is None
