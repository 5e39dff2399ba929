"""The guarantee matrix: every real CLI under every limit, against a model that never stops.

The scripted model server's ``touch-forever`` script asks for one shell call per
step, each leaving ``tick-K.done`` in the work folder. So the files prove which
calls were *executed* (not only asked for), and the server's request log which
model calls were made. For each CLI and limit: the run ends with the limit's
exit code, nothing past the limit ran, and a model request that was already in
flight when the stop landed is named in the report rather than hidden.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from tests.support.limited_run import limited_run

from tether.harnesses.base import Harness
from tether.testing.model_server import ModelServer

pytestmark = pytest.mark.real_harness

HARNESSES = ["claude-code", "codex", "copilot", "pi", "pi-1"]
# harnesses whose stream says a model request was sent before any answer (Copilot's
# model.call_start): a request the stop caught in flight is in their report
ANNOUNCES_REQUESTS = ("copilot",)


@dataclass(frozen=True)
class Limit:
    flags: tuple[str, ...]
    exit_code: int
    status: str
    # calls the limit lets run (None: not fixed, e.g. a timeout)
    calls: int | None
    config: str = ""


LIMITS = {
    "iterations-3": Limit(("--iterations", "3"), 20, "iteration_limit", 3),
    "tool-calls-2": Limit(("--tool-calls", "2"), 21, "tool_call_limit", 2),
    "timeout": Limit(("--timeout", "3"), 22, "timeout", None),
    "gate-budget-3": Limit((), 21, "tool_call_limit", 3, config="gate_budget = 3\n"),
    # a model request is far above 3000 tokens: the first reported usage crosses it
    "tokens-3000": Limit(("--tokens", "3000"), 25, "token_limit", None),
}


def _requests_announced(events: Path) -> int:
    """The model requests the harness's stream says it sent (Copilot's ``model.call_start``)."""
    count = 0
    for line in events.read_text("utf-8").splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue  # the last line, cut by the stop
        count += isinstance(entry, dict) and entry.get("type") == "model.call_start"
    return count


@pytest.mark.parametrize("limit_name", sorted(LIMITS))
@pytest.mark.parametrize("harness", HARNESSES)
def test_nothing_past_the_limit_runs(
    harness: str,
    limit_name: str,
    agent_cli: Callable[[str], tuple[Harness, Path]],
    model_server: Callable[..., ModelServer],
    tmp_path: Path,
    tether_home: Path,
) -> None:
    limit = LIMITS[limit_name]
    adapter, exe = agent_cli(harness)
    server = model_server("touch-forever", think=0.05)
    done, work = limited_run(
        adapter.name, exe, server.port, tmp_path, tether_home, limit.flags, config=limit.config
    )
    # in call order: tick-10 after tick-9, not after tick-1
    files = sorted((p.name for p in work.glob("tick-*.done")), key=lambda n: int(n[5:-5]))
    if limit.status == "token_limit" and harness == "copilot":
        # its stream reports no usage: refused up front rather than never firing
        assert done.returncode == 3, done.stderr
        assert server.model_calls == 0 and files == []
        return
    why = (
        f"stderr: {done.stderr[-1500:]}\nfiles: {files}\n"
        f"requests: {[(r.step, r.action) for r in server.requests]}"
    )
    assert done.returncode == limit.exit_code, why
    record: dict[str, Any] = json.loads(done.stdout)
    assert record["status"] == limit.status, why
    report = json.loads(Path(record["run_dir"], "report.json").read_text())
    served = [c for r in server.requests for c in r.tool_calls]
    if limit.calls is not None:
        # exactly the allowed calls ran, in order; none past the limit
        assert files == [f"tick-{k}.done" for k in range(1, limit.calls + 1)], why
    else:
        # a timeout: every executed call was one the model asked for, in order
        assert files == [f"tick-{k}.done" for k in range(1, len(files) + 1)], why
        assert len(files) <= len(served), why
    if limit.status == "tool_call_limit":
        assert limit.calls is not None
        refused = report["refused_call"]
        assert refused is not None, why
        assert refused["executed"] is False, why
        assert f"tick-{limit.calls + 1}.done" in refused["call"], (refused, why)
    if limit.status == "iteration_limit":
        # the model was asked for at most one step past the limit; one in flight is named
        assert server.model_calls <= 4, why
        if report["iterations"]["used"] > 3:
            assert report["in_flight"] is not None, why
        if harness in ANNOUNCES_REQUESTS:
            # a request the harness printed before it was stopped is in the report. The
            # stop can land between the print and the send or the other way round, so a
            # printed request may never reach the server, and one the server got may
            # never have been printed: only the stream is the report's to know.
            announced = _requests_announced(Path(record["run_dir"], "events.jsonl"))
            if announced > 3:
                in_flight = report["in_flight"]
                assert in_flight is not None, (report, why)
                assert in_flight["model_steps_past_limit"] == announced - 3, why
