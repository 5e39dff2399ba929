"""Scenario ``call:NAME``: the scripted model calls a tool by name, whatever prefix the
client gave it."""

from __future__ import annotations

import pytest

from tether.testing.model_server.scenario import (
    FinalText,
    NamedCall,
    matches_tool,
    parse_scenario,
)


def test_a_call_scenario_calls_once_then_ends() -> None:
    scenario = parse_scenario('call:loop_tick:{"dry_run": true}')
    assert scenario.action(1) == NamedCall("loop_tick", (("dry_run", True),))
    assert scenario.action(2) == FinalText("Called loop_tick.")
    assert scenario.tool_calls == 1 and scenario.last_step == 2


@pytest.mark.parametrize(
    ("offered", "wanted", "match"),
    [
        ("loop_tick", "loop_tick", True),
        ("mcp__tether__loop_tick", "loop_tick", True),  # Claude Code, Codex's namespace
        ("tether_loop_tick", "loop_tick", True),  # Vibe
        ("tether-loop_tick", "loop_tick", True),
        ("loop_ticks", "loop_tick", False),
        ("myloop_tick", "loop_tick", False),
    ],
)
def test_a_prefixed_name_matches(offered: str, wanted: str, match: bool) -> None:
    assert matches_tool(offered, wanted) is match


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("call:", "call:NAME needs a tool name"),
        ("call:loop_tick:{nope", "the arguments are not JSON"),
        ("call:loop_tick:[1]", "the arguments must be a JSON object"),
    ],
)
def test_a_bad_call_scenario_is_refused(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_scenario(spec)
