"""Every recorded transcript counts to the ground truth written beside it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tether.events.accounting import Ledger
from tether.events.counting import count_stream
from tether.events.model import AssistantText, HarnessWarning, StepStarted, ToolCallStarted
from tether.harnesses import get_harness
from tether.testing.transcripts import Transcript, count_transcript, find_transcripts

TRANSCRIPTS = Path(__file__).parents[1] / "transcripts"
HARNESSES = ("claude-code", "codex", "copilot", "pi", "vibe")
ALL = [t for h in HARNESSES for t in find_transcripts(TRANSCRIPTS, h)]


def _ledger(t: Transcript) -> Ledger:
    return count_transcript(get_harness(t.harness), t)


def test_every_harness_has_transcripts() -> None:
    found = {t.harness for t in ALL}
    assert found == set(HARNESSES)
    assert len(ALL) >= 13


@pytest.mark.parametrize("t", ALL, ids=lambda t: t.id)
def test_ledger_equals_expected(t: Transcript) -> None:
    expected = json.loads((t.stream.parent / f"{t.name}.expected.json").read_text())
    ledger = _ledger(t)
    assert ledger.iterations == expected["iterations"]
    assert ledger.tool_calls == expected["tool_calls"]
    assert ledger.tool_results == expected["tool_results"]
    assert ledger.open_tool_calls == expected["tool_calls"] - expected["tool_results"]
    assert ledger.session_id == expected["session_id"]
    assert ledger.malformed_lines == 0
    assert ledger.unknown_lines == 0
    if "final_status" in expected:
        assert ledger.final_status == expected["final_status"]
    exact_from = "stream" if expected["iterations_from"] == "stream" else "session_file"
    assert ledger.iteration_source == exact_from


# The figures of the recordings, pinned here as well as in the expected files:
# (iterations, tool calls, tool results, session id).
FIGURES = {
    ("claude-code", "five-steps"): (5, 5, 5, "0d9e0eb5-eefd-4768-85af-f044cdcfaec2"),
    ("claude-code", "forever"): (63, 63, 63, "26b66eac-9098-4695-96b4-824ef9efcb07"),
    ("codex", "five-steps"): (5, 5, 5, "01a22a83-aea5-7dc0-8696-8660b8377ba8"),
    ("codex", "forever"): (61, 61, 61, "01a22a83-b3d6-7b51-a103-a8ea0ce69498"),
    ("pi", "five-steps"): (5, 5, 5, "01a22a84-60f1-7324-8105-002884957e78"),
    ("pi", "forever"): (61, 61, 61, "01a22a84-6d2b-7182-b548-22c95442bfde"),
    ("copilot", "five-steps"): (5, 5, 5, "85ae654a-4f28-487d-bd8f-348fcad23f6f"),
    ("copilot", "forever"): (62, 62, 61, None),
    ("vibe", "five-steps"): (5, 5, 5, "87f129c6-4397-c222-bf29-f9317a110fe7"),
    ("vibe", "forever"): (41, 40, 40, "1bc08bab-9025-4bc7-900c-0fa8a7a5938f"),
    ("vibe", "tether-five-steps"): (5, 5, 5, "04fcdfd3-ff8a-0a97-493c-7af3d920dd88"),
    ("vibe", "failing-tool"): (3, 2, 2, "6f610db8-77ad-b26e-c557-7627a4718e55"),
    ("vibe", "tether-forever"): (14, 13, 13, "a7d18231-3225-f918-4d21-ac5533897278"),
}


@pytest.mark.parametrize(("harness", "scenario"), sorted(FIGURES))
def test_pinned_figures(harness: str, scenario: str) -> None:
    iterations, calls, results, session_id = FIGURES[harness, scenario]
    (t,) = [t for t in ALL if t.harness == harness and t.name == scenario]
    ledger = _ledger(t)
    assert (ledger.iterations, ledger.tool_calls, ledger.tool_results) == (
        iterations,
        calls,
        results,
    )
    assert ledger.session_id == session_id


def test_copilot_forever_leaves_the_killed_call_open() -> None:
    (t,) = [t for t in ALL if t.id == "copilot/forever"]
    ledger = _ledger(t)
    assert ledger.open_tool_calls == 1
    assert ledger.final_status is None  # killed: no result line


def _codex(name: str) -> Transcript:
    (t,) = [t for t in ALL if t.id == f"codex/{name}"]
    return t


def test_codex_stream_alone_has_no_model_steps() -> None:
    """The rule: iterations come from the rollout, never from the --json stream."""
    codex = get_harness("codex")
    for name in ("five-steps", "forever"):
        with _codex(name).open_stream() as stream:
            ledger = count_stream(codex, stream)
        assert ledger.iteration_source == "bound"
        # without the rollout the count is the stream's upper bound: tool items + texts
        assert ledger.iterations == ledger.tool_calls + ledger.assistant_texts
        for line in _codex(name).lines():
            assert not any(isinstance(e, StepStarted) for e in codex.parse_line(line))


@pytest.mark.parametrize(
    ("name", "exact", "turns", "upper"),
    [
        ("five-steps", 5, 1, 6),
        ("forever", 61, 1, 61),
    ],
)
def test_codex_stream_bounds_hold(name: str, exact: int, turns: int, upper: int) -> None:
    """Lower bound: turns seen; upper bound: tool items + agent messages."""
    codex = get_harness("codex")
    calls: set[str] = set()
    messages = turn_starts = 0
    for line in _codex(name).lines():
        if b'"type":"turn.started"' in line:
            turn_starts += 1
        for event in codex.parse_line(line):
            if isinstance(event, ToolCallStarted):
                calls.add(event.call_id)
            elif isinstance(event, AssistantText):
                messages += 1
    assert turn_starts == turns
    assert len(calls) + messages == upper
    assert turns <= exact <= upper
    assert _ledger(_codex(name)).iterations == exact


def test_codex_failures_end_the_run_as_failure() -> None:
    for name, text in (("unauthorized", "401"), ("server-error", "high demand")):
        ledger = _ledger(_codex(name))
        assert ledger.final_status == "failure"
        assert ledger.stop_reason == "turn.failed"
        assert ledger.final_message is not None and text in ledger.final_message
        assert ledger.iterations == 0


def test_codex_reconnect_notices_are_warnings_not_failures() -> None:
    t = _codex("reconnecting")
    codex = get_harness("codex")
    retries = [
        e
        for line in t.lines()
        for e in codex.parse_line(line)
        if isinstance(e, HarnessWarning) and e.message.startswith("Reconnecting...")
    ]
    assert len(retries) == 2
    ledger = _ledger(t)
    assert ledger.final_status is None
    assert ledger.warnings == 3  # the model-metadata error item and two retries


def test_codex_error_item_is_a_warning() -> None:
    ledger = _ledger(_codex("five-steps"))
    assert ledger.warnings == 1
    assert ledger.final_status == "success"
    assert ledger.last_assistant_text == "All five steps done."
    assert ledger.usage.input_tokens == 52995


def _vibe(name: str) -> Transcript:
    (t,) = [t for t in ALL if t.id == f"vibe/{name}"]
    return t


def test_vibe_failing_command_is_a_tool_error() -> None:
    ledger = _ledger(_vibe("failing-tool"))
    assert (ledger.iterations, ledger.tool_calls, ledger.tool_errors) == (3, 2, 1)
    assert ledger.last_assistant_text == "Done after a failing step."
    assert ledger.final_status == "success"


def test_vibe_stream_alone_has_no_model_steps() -> None:
    """The rule: iterations come from the session journal, never from the stream."""
    vibe = get_harness("vibe")
    for name in ("five-steps", "forever", "tether-five-steps", "tether-forever", "failing-tool"):
        t = _vibe(name)
        with t.open_stream() as stream:
            ledger = count_stream(vibe, stream)
        assert ledger.iteration_source == "bound"
        assert ledger.iterations == ledger.tool_calls + ledger.assistant_texts
        for line in t.lines():
            assert not any(isinstance(e, StepStarted) for e in vibe.parse_line(line))


def test_vibe_usage_and_end_come_from_the_journal() -> None:
    ledger = _ledger(_vibe("five-steps"))
    # the five completion results' usage, summed (8015 + … + 8492 input tokens)
    assert ledger.usage.input_tokens == 41312
    assert ledger.usage.output_tokens == 60
    assert (ledger.final_status, ledger.stop_reason) == ("success", "completed")
    forever = _vibe("forever")
    assert _ledger(forever).final_status is None  # killed by timeout: the turn never closed
    assert forever.session is not None
    vibe = get_harness("vibe")
    warnings = [
        e
        for line in forever.session.read_bytes().splitlines()
        for e in vibe.parse_session_line(line)
        if isinstance(e, HarnessWarning)
    ]
    # the model call in flight at the kill ended as completion_failed: still a step
    assert [w.message for w in warnings] == ["model call ended as completion_failed"]


def test_pi_usage_is_summed_per_model_call() -> None:
    (t,) = [t for t in ALL if t.id == "pi/five-steps"]
    ledger = _ledger(t)
    assert ledger.usage.input_tokens == 1430 + 1499 + 1622 + 1690 + 1759
    assert ledger.usage.output_tokens == 60
    assert ledger.final_status == "success"
