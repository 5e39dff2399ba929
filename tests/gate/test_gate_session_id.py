"""Which session a call counts under: payload, variables, then the agent process.

The fallback is tested with real process trees in which every tool call is a
fresh child process (as a harness runs a wrapper): the id must be the same for
every call of one agent, and differ between agents.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from tests.gate.gate_support import query
from tests.outside_agents import detached

from tether.core import process_tree, session_identity
from tether.core.agents import match_agent

FAKE_AGENT = r"""
import json, os, subprocess, sys
gate, calls, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
codes = []
for _ in range(calls):
    if mode == "shell":      # agent -> sh -c -> tether-gate
        argv = ["sh", "-c", f"'{gate}' tick --tool Bash"]
    else:                    # agent -> sh -c -> python wrapper -> tether-gate
        wrapper = f"import subprocess, sys; sys.exit(subprocess.call(['{gate}', 'tick']))"
        argv = ["sh", "-c", f"'{sys.executable}' -c \"{wrapper}\""]
    codes.append(subprocess.run(argv, stderr=subprocess.DEVNULL).returncode)
print(json.dumps({"pid": os.getpid(), "codes": codes}))
"""


def _start_agent(
    script: Path, gate: str, calls: int, mode: str, env: dict[str, str], leader: bool
) -> subprocess.Popen[str]:
    return subprocess.Popen(
        detached([sys.executable, str(script), gate, str(calls), mode], new_session=leader),
        stdout=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env=env,
    )


def _finish(agent: subprocess.Popen[str]) -> dict[str, object]:
    out, _ = agent.communicate(timeout=120)
    assert agent.returncode == 0
    result: dict[str, object] = json.loads(out)
    return result


def _key_of(pid: int) -> str:
    info = process_tree.read_proc(pid)
    assert info is None or info.pid == pid
    return f"proc:{process_tree.boot_id()}:{pid}:"


@pytest.fixture
def agent_script(tmp_path: Path) -> Path:
    script = tmp_path / "fake_agent.py"
    script.write_text(FAKE_AGENT)
    return script


@pytest.mark.slow
def test_fresh_child_per_call_shares_one_id_and_locks_at_call_61(
    tether_home: Path, env_for: object, gate_exe: str, agent_script: Path
) -> None:
    env = env_for()  # type: ignore[operator]
    agent = _start_agent(agent_script, gate_exe, 61, "shell", env, leader=True)
    result = _finish(agent)
    assert result["codes"] == [0] * 60 + [30]
    rows = query(tether_home, "SELECT session_id, calls_used, locked FROM sessions")
    assert len(rows) == 1
    key, used, locked = rows[0]
    assert key.startswith(_key_of(int(result["pid"])))  # type: ignore[call-overload]
    assert (used, locked) == (61, 1)
    sources = query(tether_home, "SELECT DISTINCT id_source FROM events")
    assert sources == [("process:command-parent",)]


def test_two_agent_processes_get_distinct_ids(
    tether_home: Path, env_for: object, gate_exe: str, agent_script: Path
) -> None:
    env = env_for()  # type: ignore[operator]
    first = _start_agent(agent_script, gate_exe, 3, "shell", env, leader=True)
    second = _start_agent(agent_script, gate_exe, 4, "wrapper", env, leader=True)
    results = [_finish(first), _finish(second)]
    rows = dict(query(tether_home, "SELECT session_id, calls_used FROM sessions"))
    assert len(rows) == 2
    events = query(tether_home, "SELECT context_key, session_id FROM events ORDER BY id")
    for result, calls in zip(results, (3, 4), strict=True):
        own = _key_of(int(result["pid"]))  # type: ignore[call-overload]
        # The wrapper agent's first call counts under its wrapper; from the second
        # on the agent process is proved to outlast it and counts that session on.
        (session,) = {sid for key, sid in events if key.startswith(own)}
        assert rows[session] == calls


def test_a_known_agent_executable_is_found_above_wrappers(
    tether_home: Path, env_for: object, gate_exe: str, agent_script: Path, tmp_path: Path
) -> None:
    # An agent CLI named like Codex, not leading its process group: found by name,
    # through a shell and a Python wrapper that are new for every call.
    named = tmp_path / "bin" / "codex"
    named.parent.mkdir()
    named.write_text(agent_script.read_text())
    env = env_for()  # type: ignore[operator]
    agent = _start_agent(named, gate_exe, 5, "wrapper", env, leader=False)
    result = _finish(agent)
    assert result["codes"] == [0] * 5
    rows = query(tether_home, "SELECT session_id, calls_used FROM sessions")
    assert len(rows) == 1
    assert rows[0][0].startswith(_key_of(int(result["pid"])))  # type: ignore[call-overload]
    assert rows[0][1] == 5
    assert query(tether_home, "SELECT DISTINCT id_source FROM events") == [("process:agent",)]


def test_agents_tether_does_not_know_can_be_named(
    tether_home: Path, env_for: object, gate_exe: str, agent_script: Path, tmp_path: Path
) -> None:
    # Two agents of an unknown kind, started by one parent, neither leading its own
    # process group: named in TETHER_GATE_AGENTS, each counts under its own id.
    named = tmp_path / "bin" / "myagent"
    named.parent.mkdir()
    named.write_text(agent_script.read_text())
    env = env_for(TETHER_GATE_AGENTS="aider, myagent")  # type: ignore[operator]
    first = _start_agent(named, gate_exe, 3, "shell", env, leader=False)
    second = _start_agent(named, gate_exe, 4, "wrapper", env, leader=False)
    results = [_finish(first), _finish(second)]
    rows = dict(query(tether_home, "SELECT session_id, calls_used FROM sessions"))
    assert len(rows) == 2
    for result, calls in zip(results, (3, 4), strict=True):
        (key,) = [k for k in rows if k.startswith(_key_of(int(result["pid"])))]  # type: ignore[call-overload]
        assert rows[key] == calls
    assert query(tether_home, "SELECT DISTINCT id_source FROM events") == [("process:agent",)]


def test_resolution_order_payload_then_variables_then_process() -> None:
    env = {"TETHER_SESSION_ID": "from-env", "CLAUDE_CODE_SESSION_ID": "from-claude"}
    assert session_identity.resolve("claude-code", "from-payload", env).source == "payload"
    chosen = session_identity.resolve("claude-code", None, env)
    assert (chosen.key, chosen.source) == ("from-env", "env:TETHER_SESSION_ID")
    chosen = session_identity.resolve("claude-code", None, {"CLAUDE_CODE_SESSION_ID": "c"})
    assert (chosen.key, chosen.source) == ("c", "env:CLAUDE_CODE_SESSION_ID")
    # A variable of another harness does not count for this one.
    chosen = session_identity.resolve("copilot", None, {"CLAUDE_CODE_SESSION_ID": "c"})
    assert chosen.source.startswith("process:")
    # Plain mode (no harness named) takes any harness's variable.
    chosen = session_identity.resolve(None, None, {"CODEX_THREAD_ID": "t-1"})
    assert (chosen.key, chosen.source) == ("t-1", "env:CODEX_THREAD_ID")


def test_the_fallback_is_never_the_gate_itself_nor_its_parent_shell(tmp_path: Path) -> None:
    # sh -c (one call) -> python (this probe, as the gate would be): the key
    # belongs to the long-lived process above the shell.
    probe = (
        "import json, os; from tether.core import session_identity as session_id; "
        "r = session_id.resolve(None, None, {}); "
        "print(json.dumps([r.key, r.source, os.getpid(), os.getppid()]))"
    )
    out = subprocess.run(
        ["sh", "-c", f"'{sys.executable}' -c '{probe}'; true"],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
        start_new_session=True,
    ).stdout
    key, source, own, parent = json.loads(out)
    assert f":{own}:" not in key and f":{parent}:" not in key
    assert source.startswith("process:")


def _info(argv: tuple[str, ...], pid: int = 10, pgrp: int = 5) -> process_tree.ProcInfo:
    return process_tree.ProcInfo(pid, 1, pgrp, 5, 100, Path(argv[0]).name[:15], argv)


@pytest.mark.parametrize(
    ("argv", "agent"),
    [
        (("/usr/local/bin/claude", "-p", "x"), "claude"),
        (("node", "/x/node_modules/.bin/codex", "exec"), "codex"),
        (("/x/@openai/codex-linux-x64/vendor/bin/codex", "exec"), "codex"),
        (("node", "/x/node_modules/@github/copilot/npm-loader.js"), "copilot"),
        (("/x/copilot-linux-x64/copilot", "-p", "x"), "copilot"),
        (("node", "/x/.bin/pi", "--mode", "json"), "pi"),
        (("python3", "-m", "tether.harnesses.scripted", "run"), "tether.harnesses.scripted"),
        (("/x/bin/vibe",), "vibe"),
        (("python3", "/x/bin/codex", "gate", "61"), "codex"),
        (("bash", "-c", "claude -p x"), None),
        (("python3", "tool.py"), None),
        (("node", "-e", "console.log(1)"), None),
    ],
)
def test_agent_names(argv: tuple[str, ...], agent: str | None) -> None:
    info = _info(argv)
    assert match_agent(info.comm, info.argv) == agent


@pytest.mark.parametrize(
    ("argv", "transient"),
    [
        (("sh", "-c", "tether-gate tick"), True),
        (("/bin/bash", "-lc", "echo hi"), True),
        (("bash", "wrapper.sh"), True),
        (("bash",), False),
        (("-bash",), False),
        (("bash", "-i"), False),
        (("bash", "--login"), False),
        (("env", "A=1", "tool"), True),
        (("timeout", "5", "tool"), True),
        (("/venv/bin/python", "/venv/bin/tether-gate", "tick"), True),
        (("python3", "-m", "tether.gate.hook", "tick"), True),
        (("python3", "agent.py"), False),
    ],
)
def test_one_call_processes(argv: tuple[str, ...], transient: bool) -> None:
    assert process_tree.is_transient(_info(argv)) is transient
