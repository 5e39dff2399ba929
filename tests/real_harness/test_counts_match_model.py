"""Real agent CLIs against the scripted model: the adapter's counts equal the model's.

The ledger comes from the CLI's own stdout read through tether's adapter (plus,
for Codex its rollout file and for Vibe its session journal: their streams
have no event per model call). The
other side is the server's request log: model calls, tool calls it served,
tool results the CLI sent back.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

pytestmark = pytest.mark.real_harness

# Vibe starts slowly (a minute on a loaded machine): beyond the default 120 s.
HARNESSES = [
    "codex",
    "pi",
    "pi-1",
    "claude-code",
    "copilot",
    pytest.param("vibe", marks=pytest.mark.timeout(600)),
]

# scenario -> (model calls, tool calls, tool results, final text)
EXPECTED = {
    "five-steps": (5, 5, 5, "All five steps done."),
    "steps:7": (7, 6, 6, "All 7 steps done."),
}


@pytest.mark.parametrize("scenario", list(EXPECTED))
@pytest.mark.parametrize("harness", HARNESSES)
def test_adapter_counts_equal_the_model_log(
    harness: str,
    scenario: str,
    run_agent: Callable[..., Any],
) -> None:
    run = run_agent(harness, scenario)
    model_calls, tool_calls, tool_results, final_text = EXPECTED[scenario]
    why = run.explain()

    assert run.returncode == 0, why
    # the model side: the whole scenario was played, nothing else was asked
    assert run.summary.model_calls == model_calls, why
    assert run.summary.tool_calls_served == tool_calls, why
    assert run.summary.tool_results_returned == tool_results, why
    assert run.summary.final_text_served, why
    assert run.summary.side_calls == 0 and run.summary.other_requests == 0, why
    # the adapter side equals it
    ledger = run.ledger
    assert ledger.iterations == run.summary.model_calls == model_calls, why
    assert ledger.tool_calls == run.summary.tool_calls_served == tool_calls, why
    assert ledger.tool_results == run.summary.tool_results_returned == tool_results, why
    assert ledger.open_tool_calls == 0, why
    assert ledger.tool_errors == 0, why
    assert ledger.malformed_lines == 0, why
    assert ledger.session_id, why
    assert ledger.final_status == "success", why
    assert ledger.last_assistant_text == final_text, why
    if harness in ("codex", "vibe"):
        assert run.session_file is not None and ledger.iteration_source == "session_file", why
