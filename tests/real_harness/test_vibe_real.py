"""Real Vibe 2.26.1 against the scripted model: counts, limits, the gate.

Vibe prints a tool call only once it has finished and no line per model call;
the iterations come from its session journal (as Codex's from its rollout).
Under ``tether run`` its own ``--max-turns`` is set to the iteration budget
(measured exact: it stops after model call N, before N+1 is sent) and a
per-run ``VIBE_HOME`` adds the gate's ``pre_tool`` hook, which refuses the
call past the tool-call budget before it runs. The ``touch-forever`` script
leaves one file per executed call, so the files prove which calls ran.
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.support.limited_run import PROMPT, limited_run

from tether.events.counting import count_stream
from tether.harnesses.base import Harness, RunSpec
from tether.testing.model_server import ModelServer, client_setup
from tether.testing.model_server.clients import VIBE_ALIAS, VIBE_INPUT_PRICE, VIBE_OUTPUT_PRICE

# Vibe takes seconds to start (a minute on a loaded machine): more than the
# suite's default 120 s per test.
pytestmark = [pytest.mark.real_harness, pytest.mark.timeout(600)]


def test_vibe_failing_tool_counts_equal_the_model_log(run_agent: Callable[..., Any]) -> None:
    run = run_agent("vibe", "failing-tool")
    why = run.explain()
    assert run.returncode == 0, why
    assert (run.summary.model_calls, run.summary.tool_calls_served) == (3, 2), why
    ledger = run.ledger
    assert ledger.iterations == run.summary.model_calls == 3, why
    assert ledger.tool_calls == ledger.tool_results == run.summary.tool_results_returned == 2
    assert ledger.tool_errors == 1, why  # the ls of a missing path
    assert ledger.iteration_source == "session_file" and run.session_file is not None, why
    assert ledger.last_assistant_text == "Done after a failing step.", why
    assert ledger.final_status == "success", why
    assert ledger.malformed_lines == ledger.unknown_lines == 0, why


def test_vibe_forever_stopped_by_sigterm_counts_equal_the_model_log(
    agent_cli: Callable[[str], tuple[Harness, Path]],
    model_server: Callable[..., ModelServer],
    tmp_path: Path,
) -> None:
    adapter, exe = agent_cli("vibe")
    server = model_server("forever", think=0.25)
    setup = client_setup("vibe", tmp_path / "home", server.port)
    work = tmp_path / "work"
    work.mkdir()
    argv = adapter.build_command(RunSpec(prompt=PROMPT, extra_args=setup.extra_args))
    argv[0] = str(exe)
    env = {"PATH": os.environ["PATH"], **setup.env}
    agent = subprocess.Popen(
        argv, cwd=work, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=False
    )
    try:
        assert server.wait_until(lambda r: sum(x.kind == "agent" for x in r) >= 4, 120.0)
        agent.send_signal(signal.SIGTERM)
        stdout, _ = agent.communicate(timeout=60)
    finally:
        if agent.poll() is None:
            agent.kill()
            agent.wait()
    stream_only = count_stream(adapter, io.BytesIO(stdout))
    assert stream_only.session_id, stdout[-2000:]
    session = adapter.session_file(stream_only.session_id, env)
    assert session is not None and session.is_file(), stream_only.session_id
    with session.open("rb") as journal:
        ledger = count_stream(adapter, io.BytesIO(stdout), journal)
    summary = server.summary()
    why = f"rc={agent.returncode} summary={summary} ledger={ledger.to_dict()}"
    # every model call the server got is a completion result in the journal
    assert ledger.iterations == summary.model_calls >= 4, why
    # every finished call was sent back, except the last one's when it was cut off
    assert ledger.tool_calls == ledger.tool_results, why
    assert summary.tool_results_returned <= ledger.tool_results <= summary.tool_calls_served, why
    assert ledger.tool_results >= summary.model_calls - 1, why


def _tether_run(
    exe: Path,
    server: ModelServer,
    tmp_path: Path,
    tether_home: Path,
    *limits: str,
    vibe_args: tuple[str, ...] = (),
) -> tuple[subprocess.CompletedProcess[str], Path]:
    return limited_run(
        "vibe",
        exe,
        server.port,
        tmp_path,
        tether_home,
        limits,
        extra_args=vibe_args,
        run_timeout=240,
        wait=300,
    )


def _ticks(work: Path) -> list[str]:
    return sorted(p.name for p in work.glob("tick-*.done"))


def test_tether_run_stops_vibe_exactly_at_the_iteration_limit(
    agent_cli: Callable[[str], tuple[Harness, Path]],
    model_server: Callable[..., ModelServer],
    tmp_path: Path,
    tether_home: Path,
) -> None:
    _adapter, exe = agent_cli("vibe")
    server = model_server("touch-forever", think=0.05)
    done, work = _tether_run(exe, server, tmp_path, tether_home, "--iterations", "3")
    why = f"stderr: {done.stderr[-2000:]}\nrequests: {[r.step for r in server.requests]}"
    assert done.returncode == 20, why
    record = json.loads(done.stdout)
    assert record["status"] == "iteration_limit", why
    # Vibe's own --max-turns 3: model call 4 was never sent, no fourth call ran
    assert server.model_calls == 3, why
    assert _ticks(work) == ["tick-1.done", "tick-2.done", "tick-3.done"], why
    assert (record["iterations"], record["tool_calls"], record["tool_results"]) == (3, 3, 3)
    assert "--max-turns" in record["argv"] and "3" in record["argv"], record["argv"]
    assert record["harness_session_id"], why
    assert record["report"]["stop_reason"] == "iteration_limit"
    report = Path(record["run_dir"], "report.md")
    assert report.exists()
    # a follow-up continues in a fresh Vibe session with the report in its prompt
    more, _ = _tether_run(
        exe, server, tmp_path, tether_home, "--follow-up", record["id"], "--iterations", "1"
    )
    assert more.returncode == 20, more.stderr[-2000:]
    follow = json.loads(more.stdout)
    assert follow["follow_up_of"] == record["id"]
    assert follow["harness_session_id"] not in (None, record["harness_session_id"])
    assert report.read_text() in Path(follow["run_dir"], "prompt.md").read_text()
    # one more model call (a fresh conversation: the script starts over at tick 1)
    assert server.model_calls == 4


def test_tether_run_refuses_the_vibe_call_past_the_tool_call_limit(
    agent_cli: Callable[[str], tuple[Harness, Path]],
    model_server: Callable[..., ModelServer],
    tmp_path: Path,
    tether_home: Path,
) -> None:
    _adapter, exe = agent_cli("vibe")
    server = model_server("touch-forever", think=0.05)
    done, work = _tether_run(exe, server, tmp_path, tether_home, "--tool-calls", "2")
    why = f"stderr: {done.stderr[-2000:]}\nrequests: {[r.step for r in server.requests]}"
    assert done.returncode == 21, why
    record = json.loads(done.stdout)
    assert record["status"] == "tool_call_limit", why
    # the run's pre_tool hook refused call 3 before it ran: two files, never a third
    assert _ticks(work) == ["tick-1.done", "tick-2.done"], why
    assert server.model_calls <= 4, why
    assert record["report"]["tool_calls"]["limit"] == 2
    # the user's VIBE_HOME was not touched: the hook lives in the run's own home
    assert not (tmp_path / "home" / ".vibe" / "hooks.toml").exists()
    assert (Path(record["run_dir"]) / "vibe-home" / "hooks.toml").is_file()


def test_tether_run_stops_vibe_at_the_token_limit_with_vibe_own_belt(
    agent_cli: Callable[[str], tuple[Harness, Path]],
    model_server: Callable[..., ModelServer],
    tmp_path: Path,
    tether_home: Path,
) -> None:
    # Each model call of this script reports about 8000 input tokens: the third
    # one passes 20000. Vibe's own --max-tokens ends the turn there, before the
    # third call's tool runs; tether reads the usage from the journal.
    _adapter, exe = agent_cli("vibe")
    server = model_server("touch-forever", think=0.05)
    done, work = _tether_run(exe, server, tmp_path, tether_home, "--tokens", "20000")
    why = f"stderr: {done.stderr[-2000:]}\nrequests: {[r.step for r in server.requests]}"
    assert done.returncode == 25, why
    record = json.loads(done.stdout)
    assert record["status"] == "token_limit", why
    assert "--max-tokens" in record["argv"] and "20000" in record["argv"], record["argv"]
    assert server.model_calls == 3, why
    assert _ticks(work) == ["tick-1.done", "tick-2.done"], why
    spent = record["usage"]["input_tokens"] + record["usage"]["output_tokens"]
    assert spent > 20000, record["usage"]


def test_tether_run_stops_vibe_at_the_cost_limit_with_vibe_own_belt(
    agent_cli: Callable[[str], tuple[Harness, Path]],
    model_server: Callable[..., ModelServer],
    tmp_path: Path,
    tether_home: Path,
) -> None:
    # The scripted model is priced at 1 and 2 USD per million input and output
    # tokens in Vibe's config; each call reports about 8000 input tokens, so the
    # third one passes 0.02 USD. tether derives the cost from the journal's usage
    # and those prices; Vibe's own --max-price 0.02 is the second belt. Vibe's
    # export (--output-dir) carries the cost Vibe itself computed.
    _adapter, exe = agent_cli("vibe")
    server = model_server("touch-forever", think=0.05)
    export = tmp_path / "vibe-export"
    done, work = _tether_run(
        exe,
        server,
        tmp_path,
        tether_home,
        "--cost",
        "0.02",
        vibe_args=("--output-dir", str(export)),
    )
    why = f"stderr: {done.stderr[-2000:]}\nrequests: {[r.step for r in server.requests]}"
    assert done.returncode == 26, why
    record = json.loads(done.stdout)
    assert record["status"] == "cost_limit", why
    argv = record["argv"]
    assert argv[argv.index("--max-price") + 1] == "0.02", argv
    assert f"VIBE_ACTIVE_MODEL={VIBE_ALIAS}" in argv, argv  # the model tether priced, pinned
    # the model server's log: three calls, the third the first past 0.02 USD
    calls = [r for r in server.requests if r.kind == "agent"]
    costs = [
        (r.input_tokens * VIBE_INPUT_PRICE + r.output_tokens * VIBE_OUTPUT_PRICE) / 1e6
        for r in calls
    ]
    assert len(calls) == 3, why
    assert sum(costs[:2]) <= 0.02 < sum(costs), costs
    # no tool of the crossing call ran
    assert _ticks(work) == ["tick-1.done", "tick-2.done"], why
    # the iterations are the journal's, not the stream's bound
    assert (record["iterations"], record["report"]["iterations_exact"]) == (3, True), why
    used = record["report"]["cost_usd"]
    assert used["limit"] == 0.02
    assert used["used"] == pytest.approx(sum(costs), rel=1e-9), (used, costs)
    assert record["usage"]["input_tokens"] == sum(r.input_tokens for r in calls)
    # the same formula Vibe computes for itself: its export, written as the stop
    # ends it, holds the cost of the replies it had counted by then: all three,
    # or the first two when tether's SIGTERM lands before Vibe counts the third
    vibe_own = json.loads((export / "export.json").read_text())
    counted = [sum(costs[:n]) for n in (2, 3)]
    assert any(vibe_own["cost_usd"] == pytest.approx(c, rel=1e-9) for c in counted), (
        vibe_own["cost_usd"],
        costs,
    )
    assert "cost (USD)" in Path(record["run_dir"], "report.md").read_text()
