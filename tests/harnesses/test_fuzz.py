"""Property: every adapter's parse_line is total. Whatever the bytes, it returns
events and never raises."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tether.events.lines import OVERSIZE
from tether.events.model import AnyEvent, Event, MalformedLine, UnknownLine, Usage
from tether.harness_registry import BUILTIN
from tether.harnesses import get_harness
from tether.harnesses.base import Harness
from tether.harnesses.vibe import VibeHarness
from tether.harnesses.vibe_prices import VibePrices

TRANSCRIPTS = Path(__file__).parents[1] / "transcripts"
FUZZ = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


NAMES = sorted(BUILTIN)


def test_all_six_registry_names_are_fuzzed() -> None:
    assert set(NAMES) == {"claude-code", "codex", "copilot", "pi", "vibe", "scripted"}


def _sample_objects() -> list[Any]:
    """One real line of every type seen in the recordings and hand-made files."""
    seen: dict[tuple[str, str], Any] = {}
    for path in sorted(TRANSCRIPTS.glob("*/*.jsonl")):
        if path.name.endswith((".mock-log.jsonl", ".session.jsonl")):
            continue
        for line in path.read_bytes().splitlines():
            obj = json.loads(line)
            key = (path.parent.name, str(obj.get("type") or obj.get("role")))
            if key not in seen and len(line) < 20_000:
                seen[key] = obj
    return list(seen.values())


SAMPLES = _sample_objects()
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


def _mutate(obj: Any, data: st.DataObject, depth: int = 0) -> Any:
    """Replace one value somewhere inside ``obj`` with arbitrary JSON (or delete a key)."""
    if depth > 6 or not isinstance(obj, dict | list) or not obj:
        return data.draw(json_values)
    if data.draw(st.integers(0, 4)) == 0:
        return data.draw(json_values)
    if isinstance(obj, dict):
        key = data.draw(st.sampled_from(sorted(obj)))
        copy = dict(obj)
        if data.draw(st.integers(0, 5)) == 0:
            del copy[key]
        else:
            copy[key] = _mutate(obj[key], data, depth + 1)
        return copy
    index = data.draw(st.integers(0, len(obj) - 1))
    copy_list = list(obj)
    copy_list[index] = _mutate(obj[index], data, depth + 1)
    return copy_list


def _check(adapter: Harness, line: bytes) -> list[AnyEvent]:
    events = adapter.parse_line(line)
    assert isinstance(events, list)
    assert all(isinstance(e, Event) for e in events)
    return events


@pytest.mark.parametrize("name", NAMES)
@FUZZ
@given(raw=st.binary(max_size=400))
def test_arbitrary_bytes(name: str, raw: bytes) -> None:
    _check(get_harness(name), raw)


@pytest.mark.parametrize("name", NAMES)
@FUZZ
@given(text=st.text(max_size=400))
def test_arbitrary_text(name: str, text: str) -> None:
    _check(get_harness(name), text.encode("utf-8", "surrogatepass"))


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
@FUZZ
@given(value=json_values)
def test_arbitrary_json(name: str, value: Any) -> None:
    events = _check(get_harness(name), json.dumps(value).encode())
    if not isinstance(value, dict):
        # Not an object: no harness prints these; they must be recorded.
        assert any(isinstance(e, MalformedLine | UnknownLine) for e in events)


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
@FUZZ
@given(data=st.data())
def test_real_lines_with_one_value_replaced(name: str, data: st.DataObject) -> None:
    obj = data.draw(st.sampled_from(SAMPLES))
    _check(get_harness(name), json.dumps(_mutate(obj, data)).encode())


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
@FUZZ
@given(data=st.data())
def test_real_lines_cut_or_marked_oversize(name: str, data: st.DataObject) -> None:
    line = json.dumps(data.draw(st.sampled_from(SAMPLES))).encode()
    cut = data.draw(st.integers(0, len(line)))
    adapter = get_harness(name)
    _check(adapter, line[:cut])
    events = _check(adapter, OVERSIZE + line[:cut])
    assert [type(e) for e in events] == [MalformedLine]


@pytest.mark.parametrize("name", NAMES)
def test_deep_nesting_and_bad_utf8(name: str) -> None:
    adapter = get_harness(name)
    deep = b"[" * 100_000 + b"]" * 100_000
    for line in (
        deep,
        b'{"type":"assistant","message":' + deep + b"}",
        b'{"type":"item.started","item":{"id":"i","type":"mcp_tool_call","arguments":'
        + deep
        + b"}}",
        b'{"role":"assistant","tool_calls":[{"id":"a","function":{"arguments":"'
        + b"[" * 100_000
        + b'"}}]}',
        b'{"type":"\xff\xfe"}',
        b"\xed\xa0\x80",
    ):
        _check(adapter, line)


def _session_samples() -> list[tuple[str, Any]]:
    """One real session-file line of every record type, for the harnesses that read one."""
    seen: dict[tuple[str, str], Any] = {}
    for path in sorted(TRANSCRIPTS.glob("*/*.session.jsonl")):
        harness = path.parent.name
        if get_harness(harness).iteration_source != "session_file":
            continue
        for line in path.read_bytes().splitlines():
            obj = json.loads(line)
            payload: dict[str, Any] = obj["payload"] if isinstance(obj.get("payload"), dict) else {}
            result: dict[str, Any] = (
                payload["result"] if isinstance(payload.get("result"), dict) else {}
            )
            key = (harness, f"{obj.get('type')}/{payload.get('kind')}/{result.get('type')}")
            if key not in seen and len(line) < 40_000:
                seen[key] = (harness, obj)
    return list(seen.values())


SESSION_SAMPLES = _session_samples()


def test_session_samples_cover_codex_and_vibe() -> None:
    assert {h for h, _ in SESSION_SAMPLES} == {"codex", "vibe"}


@FUZZ
@given(data=st.data())
def test_session_lines_with_one_value_replaced(data: st.DataObject) -> None:
    harness, obj = data.draw(st.sampled_from(SESSION_SAMPLES))
    adapter = get_harness(harness)
    if harness == "vibe" and data.draw(st.booleans()):
        # a priced adapter (a run with a cost limit) costs every completion's usage
        adapter = VibeHarness(VibePrices("m", 1.5, 7.5, cached_input_price=0.15))
    line = json.dumps(_mutate(obj, data)).encode()
    cut = data.draw(st.integers(0, len(line)))
    for raw in (line, line[:cut]):
        events = adapter.parse_session_line(raw)
        assert isinstance(events, list)
        assert all(isinstance(e, Event) for e in events)
        costs = [e.cost_usd for e in events if isinstance(e, Usage) and e.cost_usd is not None]
        assert all(math.isfinite(c) for c in costs), costs
