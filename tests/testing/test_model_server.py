"""The scripted model server at the protocol level: plain HTTP, no agent CLI.

Each protocol is driven the way its CLI drives it: the client sends its history
back, with the server's own tool-call ids and a result per call, until the
server answers with text.
"""

from __future__ import annotations

import http.client
import json
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tether.testing.model_server import (
    FinalText,
    ModelServer,
    ShellCalls,
    client_setup,
    next_step,
    parse_scenario,
    read_log,
)

CALL_ID = re.compile(r"^(call|toolu)_mock_s(\d+)_c(\d+)_[0-9a-f]{8}$")

CODEX_TOOLS = [
    {"type": "function", "name": "exec_command", "parameters": _p}
    for _p in [{"type": "object", "properties": {"cmd": {"type": "string"}}}]
] + [{"type": "web_search"}, {"type": "function", "name": "write_stdin", "parameters": {}}]
PI_TOOLS = [
    {"type": "function", "function": {"name": n, "parameters": {"properties": p}}}
    for n, p in [("bash", {"command": {"type": "string"}}), ("read", {"path": {}})]
]
COPILOT_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "bash",
            "parameters": {"properties": {"command": {}, "description": {}}},
        },
    },
    {"type": "function", "function": {"name": "view", "parameters": {"properties": {}}}},
]
CLAUDE_TOOLS = [
    {"name": "Bash", "input_schema": {"properties": {"command": {}, "description": {}}}},
    {"name": "Read", "input_schema": {"properties": {"file_path": {}}}},
]

Call = tuple[str, str, dict[str, Any]]  # id, name, arguments


# -- a minimal HTTP client per protocol ---------------------------------------------


def post(port: int, path: str, body: Any) -> tuple[int, str, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        raw = body if isinstance(body, bytes) else json.dumps(body).encode()
        conn.request("POST", path, raw, {"Content-Type": "application/json"})
        resp = conn.getresponse()
        return resp.status, resp.getheader("Content-Type") or "", resp.read()
    finally:
        conn.close()


def sse_events(payload: bytes) -> list[tuple[str | None, Any]]:
    events: list[tuple[str | None, Any]] = []
    for block in payload.decode().split("\n\n"):
        if not block.strip():
            continue
        name = None
        data = ""
        for line in block.splitlines():
            if line.startswith("event: "):
                name = line.removeprefix("event: ")
            elif line.startswith("data: "):
                data += line.removeprefix("data: ")
        events.append((name, data if data == "[DONE]" else json.loads(data)))
    return events


def responses_turn(port: int, history: list[Any]) -> tuple[list[Call], str | None]:
    body = {"model": "mock-model", "stream": True, "tools": CODEX_TOOLS, "input": history}
    status, ctype, payload = post(port, "/v1/responses", body)
    assert (status, ctype) == (200, "text/event-stream")
    events = sse_events(payload)
    assert events[0][0] == "response.created" and events[-1][0] == "response.completed"
    assert all(name == data["type"] for name, data in events)
    done = [d["item"] for n, d in events if n == "response.output_item.done"]
    assert events[-1][1]["response"]["output"] == done
    assert events[-1][1]["response"]["usage"]["output_tokens"] > 0
    calls = [
        (i["call_id"], i["name"], json.loads(i["arguments"]))
        for i in done
        if i["type"] == "function_call"
    ]
    texts = [c["text"] for i in done if i["type"] == "message" for c in i["content"]]
    for cid, name, args in calls:
        history.append(
            {"type": "function_call", "call_id": cid, "name": name, "arguments": json.dumps(args)}
        )
        history.append({"type": "function_call_output", "call_id": cid, "output": "ok"})
    return calls, (texts[0] if texts else None)


def chat_turn(tools: list[Any]) -> Callable[[int, list[Any]], tuple[list[Call], str | None]]:
    def turn(port: int, history: list[Any]) -> tuple[list[Call], str | None]:
        body = {"model": "mock-model", "stream": True, "tools": tools, "messages": history}
        status, ctype, payload = post(port, "/v1/chat/completions", body)
        assert (status, ctype) == (200, "text/event-stream")
        events = sse_events(payload)
        assert events[-1] == (None, "[DONE]")
        chunks = [d for _, d in events[:-1]]
        assert all(c["object"] == "chat.completion.chunk" for c in chunks)
        finish = [c["choices"][0]["finish_reason"] for c in chunks]
        assert finish[:-1] == [None] * (len(finish) - 1)
        text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks)
        partial: dict[int, dict[str, Any]] = {}
        for c in chunks:
            for tc in c["choices"][0]["delta"].get("tool_calls", []):
                slot = partial.setdefault(tc["index"], {"id": None, "name": "", "args": ""})
                slot["id"] = tc.get("id") or slot["id"]
                slot["name"] += tc.get("function", {}).get("name", "")
                slot["args"] += tc.get("function", {}).get("arguments", "")
        calls = [(s["id"], s["name"], json.loads(s["args"])) for _, s in sorted(partial.items())]
        assert finish[-1] == ("tool_calls" if calls else "stop")
        if calls:
            history.append(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {"id": i, "type": "function", "function": {"name": n, "arguments": "{}"}}
                        for i, n, _ in calls
                    ],
                }
            )
            history += [{"role": "tool", "tool_call_id": i, "content": "ok"} for i, _, _ in calls]
        return calls, (text or None)

    return turn


def anthropic_turn(port: int, history: list[Any]) -> tuple[list[Call], str | None]:
    body = {"model": "mock-model", "stream": True, "tools": CLAUDE_TOOLS, "messages": history}
    status, ctype, payload = post(port, "/v1/messages?beta=true", body)
    assert (status, ctype) == (200, "text/event-stream")
    events = sse_events(payload)
    names = [n for n, _ in events]
    assert names[0] == "message_start" and names[-2:] == ["message_delta", "message_stop"]
    blocks: dict[int, dict[str, Any]] = {}
    for name, data in events:
        assert name == data["type"]
        if name == "content_block_start":
            blocks[data["index"]] = {**data["content_block"], "json": ""}
        elif name == "content_block_delta":
            delta = data["delta"]
            if delta["type"] == "text_delta":
                blocks[data["index"]]["text"] += delta["text"]
            else:
                blocks[data["index"]]["json"] += delta["partial_json"]
    calls = [
        (b["id"], b["name"], json.loads(b["json"]))
        for b in blocks.values()
        if b["type"] == "tool_use"
    ]
    texts = [b["text"] for b in blocks.values() if b["type"] == "text"]
    stop = events[-2][1]["delta"]["stop_reason"]
    assert stop == ("tool_use" if calls else "end_turn")
    if calls:
        history.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": i, "name": n, "input": a} for i, n, a in calls
                ],
            }
        )
        history.append(
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": i, "content": "ok"} for i, _, _ in calls
                ],
            }
        )
    return calls, (texts[0] if texts else None)


def drive(
    turn: Callable[[int, list[Any]], tuple[list[Call], str | None]], port: int, limit: int = 50
) -> tuple[list[list[Call]], str | None]:
    """Run a conversation to its final text; the calls of each step and that text."""
    history: list[Any] = []
    steps: list[list[Call]] = []
    for _ in range(limit):
        calls, text = turn(port, history)
        steps.append(calls)
        if not calls:
            return steps, text
    return steps, None


# -- the five-steps scenario over each protocol ---------------------------------------


FIVE_STEP_COMMANDS = [
    ["echo step 1"],
    ["echo step 2a", "echo step 2b"],
    ["echo step 3"],
    ["echo step 4"],
    [],
]


@pytest.mark.parametrize(
    ("turn", "prefix", "tool", "command_key", "with_description"),
    [
        (responses_turn, "call", "exec_command", "cmd", False),
        (chat_turn(PI_TOOLS), "call", "bash", "command", False),
        (chat_turn(COPILOT_TOOLS), "call", "bash", "command", True),
        (anthropic_turn, "toolu", "Bash", "command", True),
    ],
    ids=["responses-codex", "chat-pi", "chat-copilot", "anthropic-claude"],
)
def test_five_steps_over_each_protocol(
    turn: Callable[[int, list[Any]], tuple[list[Call], str | None]],
    prefix: str,
    tool: str,
    command_key: str,
    with_description: bool,
) -> None:
    with ModelServer("five-steps") as server:
        steps, text = drive(turn, server.port)
        records = server.requests
        summary = server.summary()

    assert text == "All five steps done."
    assert [[a[command_key] for _, _, a in calls] for calls in steps] == FIVE_STEP_COMMANDS
    for step, calls in enumerate(steps, start=1):
        for k, (cid, name, args) in enumerate(calls):
            m = CALL_ID.match(cid)
            assert m is not None and m.groups() == (prefix, str(step), str(k)), cid
            assert name == tool
            assert ("description" in args) is with_description
    assert [r.step for r in records] == [1, 2, 3, 4, 5]
    assert [r.action for r in records] == ["tool_calls"] * 4 + ["text"]
    assert [r.tool_results_in_history for r in records] == [0, 1, 3, 4, 5]
    assert [[c.id for c in r.tool_calls] for r in records] == [[c[0] for c in s] for s in steps]
    assert all(tool in r.tool_names for r in records)
    assert (summary.model_calls, summary.tool_calls_served, summary.tool_results_returned) == (
        5,
        5,
        5,
    )
    assert summary.final_text_served and summary.side_calls == 0 and summary.other_requests == 0


def test_steps_n_serves_n_minus_one_tool_steps_then_text() -> None:
    with ModelServer("steps:7") as server:
        steps, text = drive(responses_turn, server.port)
        summary = server.summary()
    assert text == "All 7 steps done."
    assert [[a["cmd"] for _, _, a in s] for s in steps] == [
        [f"echo step {k}"] for k in range(1, 7)
    ] + [[]]
    assert (summary.model_calls, summary.tool_calls_served, summary.tool_results_returned) == (
        7,
        6,
        6,
    )


def test_forever_never_ends() -> None:
    with ModelServer("forever") as server:
        steps, text = drive(chat_turn(PI_TOOLS), server.port, limit=12)
        assert server.model_calls == 12
    assert text is None
    assert [s[0][2]["command"] for s in steps] == [f"echo tick {k}" for k in range(1, 13)]


def test_retry_and_partial_results_do_not_move_the_step() -> None:
    """The step comes from the echoed ids: a retried request gets the same step."""
    with ModelServer("five-steps") as server:
        history: list[Any] = []
        responses_turn(server.port, history)  # step 1
        responses_turn(server.port, history)  # step 2: two calls, both answered
        again = [dict(item) for item in history]
        first_two, _ = responses_turn(server.port, list(again))  # step 3
        retried, _ = responses_turn(server.port, list(again))  # the same request again
        # only one of step 2's results came back: still the step after 2
        partial = [
            i
            for i in again
            if i.get("type") != "function_call_output" or "_s2_c1_" not in i["call_id"]
        ]
        part_calls, _ = responses_turn(server.port, partial)
        steps = [r.step for r in server.requests]
    assert steps == [1, 2, 3, 3, 3]
    assert first_two[0][2] == retried[0][2] == part_calls[0][2] == {"cmd": "echo step 3"}
    assert first_two[0][0] != retried[0][0]  # each answer gets fresh ids


# -- JSON (non-streaming) answers ----------------------------------------------------


def test_non_streaming_answers_each_protocol() -> None:
    with ModelServer("steps:2") as server:
        _, _, raw = post(server.port, "/v1/responses", {"tools": CODEX_TOOLS, "input": []})
        resp = json.loads(raw)
        _, _, raw = post(server.port, "/v1/chat/completions", {"tools": PI_TOOLS, "messages": []})
        chat = json.loads(raw)
        _, _, raw = post(server.port, "/v1/messages", {"tools": CLAUDE_TOOLS, "messages": []})
        msg = json.loads(raw)
    assert resp["status"] == "completed" and resp["output"][0]["type"] == "function_call"
    assert json.loads(resp["output"][0]["arguments"]) == {"cmd": "echo step 1"}
    assert chat["choices"][0]["finish_reason"] == "tool_calls"
    assert chat["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "bash"
    assert (
        msg["stop_reason"] == "tool_use" and msg["content"][0]["input"]["command"] == "echo step 1"
    )


# -- requests that are not agent model calls -----------------------------------------


def test_side_calls_other_paths_and_bad_bodies_are_logged_not_counted() -> None:
    with ModelServer("five-steps") as server:
        side = post(server.port, "/v1/messages", {"model": "m", "stream": False, "messages": []})
        missing = post(server.port, "/v1/nothing", {})
        bad = post(server.port, "/v1/chat/completions", b"{not json")
        not_object = post(server.port, "/v1/responses", b"[1, 2]")
        tokens = post(server.port, "/v1/messages/count_tokens", {"messages": []})
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        conn.request("GET", "/v1/models")
        models = conn.getresponse()
        models_body = json.loads(models.read())
        conn.close()
        records = server.requests
        summary = server.summary()
    assert side[0] == 200 and json.loads(side[2])["stop_reason"] == "end_turn"
    assert missing[0] == 404
    assert bad[0] == 400 and "not JSON" in json.loads(bad[2])["error"]["message"]
    assert not_object[0] == 400
    assert tokens[0] == 200 and json.loads(tokens[2])["input_tokens"] >= 1
    assert models.status == 200 and models_body["data"][0]["id"] == "mock-model"
    assert [r.kind for r in records] == ["side", "other", "other", "other", "other", "other"]
    assert summary.model_calls == 0 and summary.side_calls == 1 and summary.other_requests == 5


def test_no_shell_tool_offered_answers_with_text() -> None:
    tools = [{"name": "Read", "input_schema": {"properties": {"file_path": {}}}}]
    with ModelServer("five-steps") as server:
        _, _, raw = post(server.port, "/v1/messages", {"tools": tools, "messages": []})
        record = server.requests[0]
    assert "No shell tool" in json.loads(raw)["content"][0]["text"]
    assert (record.kind, record.action, record.tool_calls) == ("agent", "no_shell_tool", ())


def test_array_shaped_command_gets_an_argv() -> None:
    tools = [
        {
            "type": "function",
            "name": "shell",
            "parameters": {"properties": {"command": {"type": "array"}}},
        }
    ]
    with ModelServer("five-steps") as server:
        _, _, raw = post(server.port, "/v1/responses", {"tools": tools, "input": []})
    args = json.loads(json.loads(raw)["output"][0]["arguments"])
    assert args == {"command": ["bash", "-lc", "echo step 1"]}


# -- the log, think time and lifecycle ------------------------------------------------


def test_log_file_is_written_per_request(tmp_path: Path) -> None:
    log = tmp_path / "requests.jsonl"
    with ModelServer("five-steps", log_path=log) as server:
        history: list[Any] = []
        responses_turn(server.port, history)
        assert len(read_log(log)) == 1  # flushed before the server stops
        responses_turn(server.port, history)
        live = server.requests
    lines = log.read_text().splitlines()
    assert len(lines) == 2
    first = json.loads(lines[0])
    assert first["path"] == "/v1/responses" and first["protocol"] == "responses"
    assert first["step"] == 1 and first["tool_results_in_history"] == 0
    assert first["tool_calls"][0]["name"] == "exec_command"
    assert first["tool_calls"][0]["arguments"] == {"cmd": "echo step 1"}
    assert isinstance(first["t"], float) and first["tools_offered"] == 3
    assert read_log(log) == live


def test_request_in_flight_is_on_record_and_stop_does_not_wait_for_think() -> None:
    server = ModelServer("forever", think=600).start()
    outcome: list[BaseException | None] = []

    def client() -> None:
        try:
            post(server.port, "/v1/chat/completions", {"tools": PI_TOOLS, "messages": []})
            outcome.append(None)
        except (OSError, http.client.HTTPException) as exc:
            outcome.append(exc)

    thread = threading.Thread(target=client)
    thread.start()
    try:
        assert server.wait_until(lambda rs: len(rs) == 1, timeout=10)
        assert server.model_calls == 1 and server.requests[0].step == 1
    finally:
        server.stop()  # pytest-timeout guards this: the think wait ends on stop
    thread.join(timeout=10)
    assert not thread.is_alive()
    assert outcome and outcome[0] is not None  # the answer never came


def test_binds_loopback_and_port_needs_a_running_server() -> None:
    server = ModelServer("steps:3")
    with pytest.raises(RuntimeError, match="not running"):
        _ = server.port
    with server:
        assert server.base_url == f"http://127.0.0.1:{server.port}"
        assert server._httpd is not None and server._httpd.server_address[0] == "127.0.0.1"
    server.stop()  # idempotent


# -- scenarios ------------------------------------------------------------------------


def test_scenario_parsing() -> None:
    assert parse_scenario("five-steps").tool_calls == 5
    assert parse_scenario("steps:7").tool_calls == 6 and parse_scenario("steps:7").last_step == 7
    assert parse_scenario("steps:1").action(1) == FinalText("All 1 steps done.")
    assert parse_scenario("forever").tool_calls is None
    assert parse_scenario("forever").action(9) == ShellCalls(("echo tick 9",))
    for bad in ("steps:0", "steps:x", "steps:", "six-steps", ""):
        with pytest.raises(ValueError, match=r"steps|scenario"):
            parse_scenario(bad)
    with pytest.raises(ValueError, match="think"):
        ModelServer("five-steps", think=-1)


def test_next_step_reads_the_highest_served_step() -> None:
    assert next_step([]) == 1
    assert next_step(["call_abc", "toolu_01xyz"]) == 1
    assert next_step(["call_mock_s2_c1_0a0b0c0d", "call_mock_s1_c0_00000000"]) == 3
    assert next_step(["toolu_mock_s4_c0_deadbeef"]) == 5


# -- client setups ------------------------------------------------------------------


@pytest.mark.parametrize("harness", ["codex", "claude-code", "pi", "copilot"])
def test_client_setup_points_each_cli_at_the_port(harness: str, tmp_path: Path) -> None:
    setup = client_setup(harness, tmp_path / "home", 4321)
    assert setup.env["HOME"] == str(tmp_path / "home")
    text = " ".join(setup.env.values()) + " ".join(p.read_text() for p in setup.config_files)
    assert "127.0.0.1:4321" in text
    assert all(p.is_relative_to(tmp_path) for p in setup.config_files)
    with pytest.raises(ValueError, match="known"):
        client_setup("nope", tmp_path, 1)


# -- the command line ------------------------------------------------------------------


def test_cli_prints_port_first_and_stops_on_sigterm(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tether.testing.model_server",
            "--scenario",
            "steps:3",
            "--port",
            "0",
            "--log",
            str(log),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline())
        steps, text = drive(anthropic_turn, port)
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    assert text == "All 3 steps done." and len(steps) == 3
    assert [r.step for r in read_log(log)] == [1, 2, 3]
    assert "steps:3" in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--scenario", "steps:zero"], "whole number"),
        (["--scenario", "nine-steps"], "unknown scenario"),
        (["--think", "-2"], "--think"),
        (["--port", "70000"], "--port"),
    ],
)
def test_cli_rejects_bad_arguments(args: list[str], message: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "tether.testing.model_server", *args],
        capture_output=True,
        text=True,
        timeout=20,
    )
    assert proc.returncode == 2
    assert message in proc.stderr and proc.stdout == ""


def test_cli_reports_a_busy_port_and_an_unwritable_log(tmp_path: Path) -> None:
    with ModelServer("five-steps") as busy:
        taken = subprocess.run(
            [sys.executable, "-m", "tether.testing.model_server", "--port", str(busy.port)],
            capture_output=True,
            text=True,
            timeout=20,
        )
    no_log = subprocess.run(
        [sys.executable, "-m", "tether.testing.model_server", "--log", str(tmp_path / "no" / "x")],
        capture_output=True,
        text=True,
        timeout=20,
    )
    assert taken.returncode == 1 and "cannot serve on 127.0.0.1" in taken.stderr
    assert no_log.returncode == 1 and "cannot write the log" in no_log.stderr
    assert taken.stdout == no_log.stdout == ""


# -- the how-to page --------------------------------------------------------------------

DOC = Path(__file__).resolve().parents[2] / "docs" / "how-to" / "test-offline.md"


def test_offline_examples_in_the_how_to_run() -> None:
    """Every python example marked ``# runs offline as-is`` runs as written."""
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    runnable = [b for b in blocks if b.startswith("# runs offline as-is")]
    assert runnable
    for block in runnable:
        exec(compile(block, str(DOC), "exec"), {"__name__": "doc_example"})  # noqa: S102
