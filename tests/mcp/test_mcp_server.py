"""`tether mcp` over real stdio: the tools, their schemas, their answers and their errors
are those of the CLI, in a real project (board, loop, store, runs)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp.client.client import Client
from tests.mcp.sdk import answer_of, session
from tests.outside_agents import without_agent_vars
from tests.support.mcp_client import StdioClient

from tether.cli.mcp_server.tools import HUMAN_ONLY, TOOLS

TETHER = str(Path(sys.executable).parent / "tether")

CONFIG = """\
kill_grace_seconds = 0.5

[loop]
board = "tickets"

[profiles.scripted]
harness = "scripted"
args = ["--format", "claude-code", "--steps", "2"]
default = true

[profiles.hang]
harness = "scripted"
args = ["--format", "claude-code", "--steps", "3", "--hang-before-result", "1"]
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "tether.toml").write_text(CONFIG, encoding="utf-8")
    return root


def _env(project: Path) -> dict[str, str]:
    env = without_agent_vars(os.environ, "TETHER_DEPTH")
    env["TETHER_HOME"] = str(project / ".tether")
    return env


def cli(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [TETHER, *args],
        cwd=project,
        env=_env(project),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def server(project: Path) -> Iterator[StdioClient]:
    with StdioClient([TETHER, "mcp"], cwd=project, env=_env(project)) as client:
        client.initialize()
        yield client


def _text(result: dict[str, Any]) -> str:
    return "".join(c["text"] for c in result["content"] if c["type"] == "text")


@pytest.mark.slow
def test_the_tools_and_their_schemas_are_the_table(server: StdioClient) -> None:
    assert server.server_info["serverInfo"]["name"] == "tether"
    listed = {t["name"]: t for t in server.list_tools()}
    assert list(listed) == [t.name for t in TOOLS]
    for tool in TOOLS:
        assert listed[tool.name]["inputSchema"] == tool.input_schema
        assert listed[tool.name]["description"] == tool.description
    for name in listed:
        assert not any(word in name for word in HUMAN_ONLY)
    assert set(listed) == {
        "subagents_wait",
        "subagents_list",
        "loop_tick",
        "board_list",
        "board_add",
        "board_show",
        "room_brief",
        "room_open",
        "wiki_search",
        "wiki_read",
        "ingest_next",
        "ingest_end",
        "run_status",
        "report_show",
    }


@pytest.mark.slow
def test_board_tools_write_and_read_the_same_board_as_the_cli(
    server: StdioClient, project: Path
) -> None:
    added = server.call("board_add", {"title": "Port the parser", "priority": "P1"})
    assert added["isError"] is False
    ticket = added["structuredContent"]
    assert ticket["state"] == "INBOX" and ticket["priority"] == "P1"
    assert _text(added).startswith(f"added {ticket['id']} in INBOX: ")
    listed = server.call("board_list", {})["structuredContent"]
    from_cli = json.loads(cli(project, "board", "list", "--json").stdout)
    assert listed == from_cli
    shown = server.call("board_show", {"ticket_id": ticket["id"]})
    assert _text(shown) == Path(ticket["path"]).read_text(encoding="utf-8")


@pytest.mark.slow
def test_loop_tick_returns_the_signal_line_and_its_exit_meaning(
    server: StdioClient, project: Path
) -> None:
    cli(project, "board", "add", "Triage me")
    result = server.call("loop_tick", {})
    assert result["isError"] is False
    lines = _text(result).splitlines()
    data = result["structuredContent"]
    assert lines[-1] == data["line"]
    assert lines[-1] == "TETHER-LOOP: CONTINUE — level 1 did work, the loop goes on."
    assert data["exit_code"] == 0 and data["signal"] == "continue"
    # a dry tick through the tool decides as the CLI's does
    dry = server.call("loop_tick", {"dry_run": True})["structuredContent"]
    done = cli(project, "loop", "tick", "--dry-run", "--json")
    assert dry["exit_code"] == done.returncode
    assert dry["line"] == json.loads(done.stdout)["line"]
    assert dry["level1"]["work"] == json.loads(done.stdout)["level1"]["work"]


@pytest.mark.slow
def test_an_error_is_a_tool_error_with_the_clis_line_and_exit_code(
    server: StdioClient, project: Path
) -> None:
    cli(project, "board", "init")
    result = server.call("board_show", {"ticket_id": "T-20260101-000000000"})
    done = cli(project, "board", "show", "T-20260101-000000000")
    assert result["isError"] is True
    assert _text(result) == done.stderr.strip()
    assert result["structuredContent"]["exit_code"] == done.returncode != 0
    missing = server.call("run_status", {"run_id": "r-nope"})
    done = cli(project, "runs", "show", "r-nope")
    assert missing["isError"] is True and _text(missing) == done.stderr.strip()
    assert missing["structuredContent"]["exit_code"] == done.returncode


@pytest.mark.slow
def test_arguments_outside_the_schema_are_refused_like_a_usage_error(
    server: StdioClient,
) -> None:
    cases: list[tuple[str, dict[str, Any], str]] = [
        ("board_add", {}, "board_add: missing argument 'title'"),
        ("board_add", {"title": "x", "colour": "red"}, "board_add: unknown argument 'colour'"),
        ("subagents_wait", {"timeout": -1}, "subagents_wait: 'timeout' must be 0 or more"),
        ("loop_tick", {"dry_run": "yes"}, "loop_tick: 'dry_run' must be a boolean"),
        ("board_add", {"title": "x", "priority": "P7"}, "must be one of P1, P2, P3"),
        ("ingest_release", {}, "unknown tool 'ingest_release'"),
    ]
    for name, args, message in cases:
        result = server.call(name, args)
        assert result["isError"] is True, name
        assert message in _text(result)
        assert result["structuredContent"]["exit_code"] == 2
        assert result["structuredContent"]["exit_meaning"] == "usage"


@pytest.mark.slow
def test_a_run_and_its_report_through_the_tools(server: StdioClient, project: Path) -> None:
    done = cli(project, "run", "--unit", "u-1", "--prompt", "go", "--iterations", "1", "--json")
    assert done.returncode == 20, done.stderr  # the iteration limit: a report is written
    run_id = json.loads(done.stdout)["id"]
    status = server.call("run_status", {"run_id": run_id})["structuredContent"]
    from_cli = json.loads(cli(project, "runs", "show", run_id, "--json").stdout)
    assert status == from_cli
    report = server.call("report_show", {"run_id": run_id})
    assert _text(report) == cli(project, "report", run_id).stdout
    assert report["structuredContent"]["run_id"] == run_id

    # the official SDK client checks both answers against the tools' output schemas
    async def body(client: Client) -> None:
        assert answer_of(await client.call_tool("run_status", {"run_id": run_id}))["id"] == run_id
        shown = answer_of(await client.call_tool("report_show", {"run_id": run_id}))
        assert shown["run_id"] == run_id

    session(project, _env(project), body)


@pytest.mark.slow
def test_subagents_wait_returns_on_a_change_not_at_its_timeout(
    server: StdioClient, project: Path
) -> None:
    before = server.call("subagents_list", {})["structuredContent"]
    assert before["running"] == 0
    # The server runs in this process's tree: registered as an orchestrator, this process
    # is the wait's caller, and the wait's first look leaves its activity in the registry.
    # The subagent starts only after that look, so the wait sees the change whatever the load.
    mine = cli(project, "watch", "add-orchestrator", "--pid", str(os.getpid()), "--name", "me")
    assert mine.returncode == 0, mine.stderr
    answer: dict[str, Any] = {}

    def wait() -> None:
        answer["result"] = server.call("subagents_wait", {"timeout": 60})
        answer["at"] = time.monotonic()

    waiting = threading.Thread(target=wait)
    waiting.start()
    _until_first_look(project, waiting)
    started = time.monotonic()
    run = subprocess.Popen(
        [TETHER, "run", "--profile", "hang", "--unit", "sub", "--prompt", "go", "--timeout", "60"],
        cwd=project,
        env=_env(project),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        waiting.join(60)
        assert not waiting.is_alive()
    finally:
        os.killpg(run.pid, signal.SIGTERM)
        run.wait(30)
    data = answer["result"]["structuredContent"]
    assert data["changed"] is True and data["timed_out"] is False
    assert data["running"] == 1
    assert [c["from"] for c in data["changes"]] == [None]
    assert answer["at"] - started < 60  # it answered the change, not its timeout


def _until_first_look(project: Path, waiting: threading.Thread) -> None:
    """Until the wait has touched its caller, i.e. taken its first look at the subagents."""
    deadline = time.monotonic() + 60  # a hang guard, not a timing assertion
    while time.monotonic() < deadline and waiting.is_alive():
        if _orchestrators(project)[0]["last_activity_source"] == "subagents wait":
            return
        time.sleep(0.05)
    raise AssertionError("subagents_wait never took its first look")


def _orchestrators(project: Path) -> list[dict[str, Any]]:
    done = cli(project, "watch", "orchestrators", "--json")
    assert done.returncode == 0, done.stderr
    found: list[dict[str, Any]] = json.loads(done.stdout)
    return found


@pytest.mark.slow
def test_subagents_wait_counts_for_the_orchestrator_whose_tree_the_server_runs_in(
    project: Path,
) -> None:
    # this test process starts the server: registered by its pid, it is the caller
    mine = cli(project, "watch", "add-orchestrator", "--pid", str(os.getpid()), "--name", "me")
    assert mine.returncode == 0, mine.stderr
    other = subprocess.Popen(["sleep", "120"])
    try:
        added = cli(project, "watch", "add-orchestrator", "--pid", str(other.pid), "--name", "x")
        assert added.returncode == 0, added.stderr
        with StdioClient([TETHER, "mcp"], cwd=project, env=_env(project)) as client:
            client.initialize()
            data = client.call("subagents_wait", {"timeout": 0.5})["structuredContent"]
        activity = {o["name"]: o for o in _orchestrators(project)}
    finally:
        other.kill()
        other.wait(10)
    assert data["orchestrator"] == activity["me"]["id"]
    assert activity["me"]["last_activity_source"] == "subagents wait"
    assert activity["x"]["last_activity"] is None  # another orchestrator is not touched
