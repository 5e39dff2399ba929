"""tether.gate.wire reads and writes JSON exactly as the json module does."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tether.gate import wire

values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(), inner, max_size=5),
    max_leaves=30,
)


@given(values)
def test_loads_agrees_with_json(value: Any) -> None:
    for text in (json.dumps(value), json.dumps(value, indent=2, ensure_ascii=False)):
        assert wire.loads(f" \n{text}\t ".encode()) == json.loads(text)


@given(values)
def test_dumps_agrees_with_json(value: Any) -> None:
    assert wire.dumps(value) == json.dumps(value)


@given(st.text(max_size=40))
def test_loads_rejects_exactly_what_json_rejects(text: str) -> None:
    try:
        expected: Any = json.loads(text)
    except ValueError:
        with pytest.raises(ValueError):
            wire.loads(text.encode())
        return
    got = wire.loads(text.encode())
    if isinstance(expected, float) and math.isnan(expected):
        assert math.isnan(got)
    else:
        assert got == expected


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"", "Expecting value"),
        (b"{} {}", "Extra data"),
        (b'{"a": }', "Expecting value"),
        (b"\xff\xfe", "utf-8"),
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
    ],
)
def test_loads_errors_say_what_is_wrong(raw: bytes, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        wire.loads(raw)


def test_dumps_refuses_what_json_cannot_hold() -> None:
    with pytest.raises(ValueError, match="not JSON"):
        wire.dumps(math.inf)
    with pytest.raises(TypeError, match="cannot encode set"):
        wire.dumps({1, 2})
