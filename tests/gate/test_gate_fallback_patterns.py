"""No per-call session ids: tools that put themselves in a process group or session
of their own, under an agent tether does not know by name.

Each test starts a real agent process (a script copied to a temporary folder as
``myagent``, a name tether does not know) outside the test runner's process
tree. The agent makes ten tool calls; each call runs the real ``tether-gate
hook --harness claude-code`` with a payload that carries no session id, through
one of the process layouts that used to give every call a new id:

- ``setsid``: ``sh -c`` starts a Python wrapper that calls ``setsid()`` and runs
  the gate;
- ``job-control``: an interactive shell (``bash -i``, job control on with
  ``set -m``) is fed the command, and runs the gate as a job in its own group;
- ``job-control-wrapper``: ``bash -c 'set -m; python wrapper.py'``, the wrapper
  in a group of its own runs the gate;
- ``new-group`` / ``new-session``: ``sh -c`` starts a Python wrapper that runs
  the gate with ``subprocess`` in a new process group (``process_group=0``) or
  session (``start_new_session=True``);
- ``node-detached``: ``sh -c`` starts a Node wrapper that spawns the gate with
  ``detached: true`` (a session of its own);
- ``direct-wrapper`` / ``direct-wrapper-shell``: the agent starts a Python
  wrapper itself (no shell between them), in a session of its own; the wrapper
  runs the gate directly, or through ``sh -c``.

Every call must count under one session (``calls_used`` reaches 10 under one
session id), or be refused, never ten ids. The same layouts under an agent
named in ``TETHER_GATE_AGENTS`` count under the agent itself.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.gate.gate_support import load_payload, query
from tests.outside_agents import detached

from tether.core import process_tree
from tether.gate import messages

CALLS = 10

AGENT = r"""
import json, os, shlex, subprocess, sys

gate, pattern, calls, payload_file = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
side_by_side = int(sys.argv[5]) if len(sys.argv) > 5 else 1
py = sys.executable
template = json.load(open(payload_file))
hook = [gate, "hook", "--harness", "claude-code"]


def wrapper(how):
    # A Python wrapper around the gate; `how` puts it (or the gate) elsewhere.
    lines = ["import os, subprocess, sys"]
    if how == "setsid":
        lines.append("os.setsid()")
    extra = {"new-group": ", process_group=0", "new-session": ", start_new_session=True"}
    command = hook
    if how == "shell":
        command = ["sh", "-c", shlex.join(hook)]
    lines.append(f"code = subprocess.call({command!r}{extra.get(how, '')})")
    if side_by_side > 1:  # stay until the calls made beside this one have been counted
        lines.append("import time; time.sleep(1)")
    lines.append("sys.exit(code)")
    return "; ".join(lines)


def start_call(index):
    payload = dict(template, tool_use_id=f"toolu_fallback_{os.getpid()}_{index}")
    payload.pop("session_id")
    data = json.dumps(payload)
    if pattern in ("setsid", "new-group", "new-session"):
        code = wrapper(pattern)
        argv, stdin = ["sh", "-c", f"'{py}' -c \"{code}\""], data
    elif pattern == "job-control":
        script = f"set -m\n'{gate}' hook --harness claude-code <<'PAYLOAD'\n{data}\nPAYLOAD\n"
        argv, stdin = ["bash", "--norc", "-i"], script
    elif pattern == "node-detached":
        code = (
            "const {spawn} = require('child_process');"
            f"spawn({json.dumps(gate)}, ['hook', '--harness', 'claude-code'],"
            " {detached: true, stdio: 'inherit'}).on('exit', (c) => process.exit(c ?? 1));"
        )
        argv, stdin = ["sh", "-c", f"node -e {shlex.quote(code)}"], data
    elif pattern == "job-control-wrapper":
        code = wrapper("plain")
        argv, stdin = ["bash", "-c", f"set -m; '{py}' -c \"{code}\""], data
    elif pattern in ("direct-wrapper", "direct-wrapper-shell"):
        how = "shell" if pattern == "direct-wrapper-shell" else "plain"
        argv, stdin = [py, "-c", wrapper(how)], data
    else:
        raise SystemExit(f"unknown pattern {pattern}")
    started = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=pattern.startswith("direct-wrapper"),
    )
    return started, stdin


def finish(started, stdin):
    out, _ = started.communicate(stdin, timeout=60)
    answer = out.strip()
    return {"code": started.returncode, "answer": json.loads(answer) if answer else None}


# The first `side_by_side` calls run at the same time (as parallel tool calls do).
first = [start_call(index) for index in range(side_by_side)]
results = [finish(*call) for call in first]
results += [finish(*start_call(index)) for index in range(side_by_side, calls)]
print(json.dumps({"pid": os.getpid(), "results": results}))
"""

PATTERNS = [
    "setsid",
    "job-control",
    "job-control-wrapper",
    "new-group",
    "new-session",
    "node-detached",
    "direct-wrapper",
    "direct-wrapper-shell",
]


def _run_agent(
    tmp_path: Path,
    gate: str,
    pattern: str,
    env: dict[str, str],
    *,
    leader: bool,
    calls: int = CALLS,
    side_by_side: int = 1,
) -> dict[str, Any]:
    folder = tmp_path / "agentbin"
    folder.mkdir(exist_ok=True)
    agent = folder / "myagent"
    agent.write_text(AGENT)
    payload = tmp_path / "payload.json"
    payload.write_text(json.dumps(load_payload("claude-code", "PreToolUse")))
    argv = [sys.executable, str(agent), gate, pattern, str(calls), str(payload), str(side_by_side)]
    done = subprocess.run(
        detached(argv, new_session=leader),
        capture_output=True,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    assert len(result["results"]) == calls
    assert all(call["code"] == 0 for call in result["results"]), result
    return result


def _denials(result: dict[str, Any]) -> list[str]:
    reasons = []
    for call in result["results"]:
        answer = call["answer"]
        if answer is not None:
            reasons.append(answer["hookSpecificOutput"]["permissionDecisionReason"])
    return reasons


def _agent_key(pid: int) -> str:
    info = process_tree.read_proc(pid)
    assert info is None or info.pid == pid
    return f"proc:{process_tree.boot_id()}:{pid}:"


@pytest.mark.slow
@pytest.mark.parametrize("leader", [False, True], ids=["in-parent-group", "group-leader"])
@pytest.mark.parametrize("pattern", PATTERNS)
def test_an_unnamed_agent_keeps_one_session_across_ten_calls(
    tether_home: Path,
    env_for: Any,
    gate_exe: str,
    tmp_path: Path,
    pattern: str,
    leader: bool,
) -> None:
    result = _run_agent(tmp_path, gate_exe, pattern, env_for(), leader=leader)
    assert _denials(result) == []
    sessions = query(
        tether_home, "SELECT DISTINCT session_id FROM events WHERE event = 'PreToolUse'"
    )
    assert len(sessions) == 1, sessions
    used = query(
        tether_home, "SELECT calls_used FROM sessions WHERE session_id = ?", (sessions[0][0],)
    )
    assert used == [(CALLS,)]
    # From the second call on, the count runs under the agent process itself.
    keys = [row[0] for row in query(tether_home, "SELECT context_key FROM events ORDER BY id")]
    assert all(key.startswith(_agent_key(int(result["pid"]))) for key in keys[1:]), keys


@pytest.mark.slow
@pytest.mark.parametrize("pattern", PATTERNS)
def test_a_named_agent_counts_under_itself(
    tether_home: Path, env_for: Any, gate_exe: str, tmp_path: Path, pattern: str
) -> None:
    env = env_for(TETHER_GATE_AGENTS="myagent")
    result = _run_agent(tmp_path, gate_exe, pattern, env, leader=False)
    assert _denials(result) == []
    rows = query(tether_home, "SELECT session_id, calls_used FROM sessions")
    assert len(rows) == 1
    key, used = rows[0]
    assert key.startswith(_agent_key(int(result["pid"])))
    assert used == CALLS
    sources = query(tether_home, "SELECT DISTINCT id_source FROM events")
    assert sources == [("process:agent",)]


@pytest.mark.slow
@pytest.mark.parametrize("pattern", ["setsid", "new-group"])
def test_first_calls_made_side_by_side_count_in_one_session(
    tether_home: Path, env_for: Any, gate_exe: str, tmp_path: Path, pattern: str
) -> None:
    # Three wrappers run at once for the agent's first calls: each is a first call
    # of its own until the next call proves the agent outlives them all.
    result = _run_agent(tmp_path, gate_exe, pattern, env_for(), leader=False, side_by_side=3)
    assert _denials(result) == []
    assert query(tether_home, "SELECT calls_used FROM sessions") == [(CALLS,)]
    sessions = query(tether_home, "SELECT DISTINCT session_id FROM events")
    assert len(sessions) == 1


@pytest.mark.slow
@pytest.mark.parametrize("pattern", ["setsid", "job-control"])
def test_agents_one_after_the_other_each_get_their_own_session(
    tether_home: Path, env_for: Any, gate_exe: str, tmp_path: Path, pattern: str
) -> None:
    # The second agent starts where the first one's wrappers stood: it is not
    # taken for one more wrapper of the first.
    first = _run_agent(tmp_path, gate_exe, pattern, env_for(), leader=False, calls=3)
    second = _run_agent(tmp_path, gate_exe, pattern, env_for(), leader=False, calls=4)
    events = query(tether_home, "SELECT context_key, session_id FROM events ORDER BY id")
    used = dict(query(tether_home, "SELECT session_id, calls_used FROM sessions"))
    assert sorted(used.values()) == [3, 4]
    for result, calls in ((first, 3), (second, 4)):
        own = _agent_key(int(result["pid"]))
        (session,) = {sid for key, sid in events if key.startswith(own)}
        assert used[session] == calls


DAEMON_AGENT = r"""
import json, os, shlex, subprocess, sys

gate, calls, payload_file = sys.argv[1], int(sys.argv[2]), sys.argv[3]
template = json.load(open(payload_file))
# Each call's wrapper leaves the agent's tree (a double fork): the gate sees a
# new process whose parent is init, and nothing above it that lasts.
code = (
    "import os, subprocess, sys\n"
    "if os.fork():\n    os._exit(0)\n"
    "os.setsid()\n"
    f"sys.exit(subprocess.call([{gate!r}, 'hook', '--harness', 'claude-code']))\n"
)
answers = []
for index in range(calls):
    payload = dict(template, tool_use_id=f"toolu_daemon_{os.getpid()}_{index}")
    payload.pop("session_id")
    read_end, write_end = os.pipe()
    wrapper = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=write_end, text=True
    )
    os.close(write_end)
    wrapper.communicate(json.dumps(payload))
    with os.fdopen(read_end) as out:  # until the orphaned gate closes it
        answer = out.read().strip()
    answers.append(json.loads(answer) if answer else None)
print(json.dumps({"pid": os.getpid(), "answers": answers}))
"""


def _run_daemon_agent(tmp_path: Path, gate: str, env: dict[str, str]) -> list[Any]:
    agent = tmp_path / "myagent"
    agent.write_text(DAEMON_AGENT)
    payload = tmp_path / "payload.json"
    payload.write_text(json.dumps(load_payload("claude-code", "PreToolUse")))
    done = subprocess.run(
        detached([sys.executable, str(agent), gate, str(CALLS), str(payload)]),
        capture_output=True,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    answers: list[Any] = json.loads(done.stdout)["answers"]
    assert len(answers) == CALLS
    return answers


def test_when_every_call_is_a_new_orphan_the_gate_refuses_instead_of_counting_afresh(
    tether_home: Path, env_for: Any, gate_exe: str, tmp_path: Path
) -> None:
    answers = _run_daemon_agent(tmp_path, gate_exe, env_for())
    # The first call cannot be told from an agent's first call; from the second
    # on, the process in its place is gone and a new one stands there: refused.
    assert answers[0] is None
    for answer in answers[1:]:
        output = answer["hookSpecificOutput"]
        assert output["permissionDecision"] == "deny"
        assert output["permissionDecisionReason"] == messages.unresolved()
    text = messages.unresolved()
    assert "TETHER_SESSION_ID" in text and "TETHER_GATE_AGENTS" in text and "\n" not in text
    assert query(tether_home, "SELECT calls_used FROM sessions") == [(1,)]


def test_the_same_orphans_count_under_tether_session_id(
    tether_home: Path, env_for: Any, gate_exe: str, tmp_path: Path
) -> None:
    answers = _run_daemon_agent(tmp_path, gate_exe, env_for(TETHER_SESSION_ID="s-daemon"))
    assert answers == [None] * CALLS
    assert query(tether_home, "SELECT session_id, calls_used FROM sessions") == [
        ("s-daemon", CALLS)
    ]
