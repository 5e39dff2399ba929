"""Front matter: the fence split, and the fast reader agreeing with the C YAML loader."""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from tether.board import ticket_yaml


def test_the_c_loader_is_available() -> None:
    assert yaml.__with_libyaml__
    assert ticket_yaml._loader() is yaml.CSafeLoader


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("---\nid: x\n---\nbody\n", ("id: x\n", "body\n")),
        ("---\nid: x\n---\n\nbody\n", ("id: x\n", "body\n")),
        ("---\nid: x\n---\n\n\nbody", ("id: x\n", "\nbody")),
        ("---\nid: x\n---\n", ("id: x\n", "")),
        ("---\nid: x\n---", ("id: x\n", "")),
        ("---\n---\nbody", ("", "body")),
        ("---\r\nid: x\r\n---\r\n\r\nbody\r\n", ("id: x\n", "body\n")),
        ("---\na: 1\n----\nb: 2\n---\nrest", ("a: 1\n----\nb: 2\n", "rest")),
        ("no front matter\n---\n", None),
        ("---\nnever closed\n", None),
    ],
)
def test_split(text: str, expected: tuple[str, str] | None) -> None:
    assert ticket_yaml.split(text) == expected


@pytest.mark.parametrize("body", ["", "x", "\nstarts blank", "a\n\n\nb\n", "---\nnot a fence"])
def test_join_then_split_gives_the_body_back(body: str) -> None:
    assert ticket_yaml.split(ticket_yaml.join("id: x\n", body)) == ("id: x\n", body)


def test_yaml_errors_name_the_line_of_the_file() -> None:
    with pytest.raises(ticket_yaml.FrontMatterError, match=r"sequence \(line 3\)"):
        ticket_yaml.parse("id: x\ntitle: [unclosed\n")


def test_impossible_date_is_an_error_not_a_crash() -> None:
    with pytest.raises(ticket_yaml.FrontMatterError, match=r"month must be in 1\.\.12"):
        ticket_yaml.parse("until: 2025-13-01\n")


CANONICAL = """id: T-20250601-123456789
title: "Fix: the \\"login\\" redirect — ünïcode"
priority: P1
created: 2025-06-01T09:30:00Z
check: ["make", "test"]
until: 2025-07-01
runs: []
count: 12
flag: false
gone: null
"""


def test_canonical_block_takes_the_fast_path_and_equals_the_loader() -> None:
    fast = ticket_yaml._fast(CANONICAL)
    assert fast == yaml.load(CANONICAL, Loader=yaml.CSafeLoader)
    assert fast["created"] == datetime(2025, 6, 1, 9, 30, tzinfo=UTC)
    assert fast["until"] == date(2025, 7, 1)


@pytest.mark.parametrize(
    "line",
    [
        "a: yes",
        "a: On",
        "a: 0755",
        "a: 1_000",
        "a: 1.5",
        "a: .inf",
        "a: value # comment",
        "a: two words",
        "a: 'single'",
        "a:  spaced",
        "yes: 1",
        "Title: x",
        "a: 2025-01-01 10:00:00",
        'a: "\\x41"',
        "a: [x, y]",
        "a:\n  - x",
        "a: |\n  block",
        "a: &anchor x",
        "a: \x85",
    ],
)
def test_anything_outside_the_subset_goes_to_the_loader(line: str) -> None:
    with pytest.raises(ticket_yaml._UnsupportedError):
        ticket_yaml._fast(line + "\n")
    try:
        expected = yaml.load(line + "\n", Loader=yaml.CSafeLoader)
    except yaml.YAMLError:
        return
    assert ticket_yaml.parse(line + "\n") == expected


@pytest.mark.parametrize(
    "value",
    [
        "2025-01-01T12:00:00.1Z",
        "2025-01-01T12:00:00.12Z",
        "2025-01-01T12:00:00.000001Z",
        "2024-02-29T23:59:59Z",
        '["a", "b, c", ""]',
        '["", ""]',
        '["x\\"y"]',
        '["a", b"]',
        "[]",
    ],
)
def test_fast_values_equal_the_loader(value: str) -> None:
    text = f"a: {value}\n"
    expected = yaml.load(text, Loader=yaml.CSafeLoader)
    try:
        assert ticket_yaml._fast(text) == expected
    except ticket_yaml._UnsupportedError:
        assert value == '["a", b"]'


def test_impossible_timestamp_is_an_error() -> None:
    with pytest.raises(ticket_yaml.FrontMatterError, match="day is out of range"):
        ticket_yaml.parse("created: 2025-02-30T00:00:00Z\n")


def test_a_tab_inside_quotes_is_kept_as_the_loader_keeps_it() -> None:
    text = 'a: "tab\tinside"\n'
    assert (
        ticket_yaml._fast(text) == yaml.load(text, Loader=yaml.CSafeLoader) == {"a": "tab\tinside"}
    )


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**18), max_value=10**18),
    st.text(max_size=40),
    st.sampled_from(["yes", "No", "null", "~", "T-20250101-000000001", "P2", "", " x ", "a: b"]),
    st.dates(min_value=date(1000, 1, 1)),
    st.datetimes(min_value=datetime(1000, 1, 1), timezones=st.just(UTC)),
    st.lists(st.text(max_size=10), max_size=4),
    st.floats(allow_nan=False),
    st.dictionaries(st.text(max_size=5), st.text(max_size=5), max_size=2),
)
fronts = st.dictionaries(
    st.one_of(st.from_regex(r"[a-z_][a-z0-9_]{0,8}", fullmatch=True), st.text(max_size=6)),
    scalars,
    max_size=8,
)


def _normal(value: Any) -> Any:
    if isinstance(value, tuple):
        return list(value)
    return value


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(fronts)
def test_every_written_block_reads_back_the_same_by_both_readers(front: dict[str, Any]) -> None:
    text = ticket_yaml.dump(front)
    by_loader = yaml.load(text, Loader=yaml.CSafeLoader) or {}
    assert by_loader == {k: _normal(v) for k, v in front.items()}
    assert (ticket_yaml.parse(text) or {}) == by_loader


@settings(max_examples=400, deadline=None)
@given(st.text(max_size=60))
def test_fast_reader_never_disagrees_with_the_loader(text: str) -> None:
    try:
        fast = ticket_yaml._fast(text)
    except ticket_yaml._UnsupportedError:
        return
    assert fast == yaml.load(text, Loader=yaml.CSafeLoader)


def _flow(value: Any) -> str:
    """A value as PyYAML writes it on one line (plain, quoted or flow style)."""
    text = yaml.dump(value, Dumper=yaml.CSafeDumper, default_flow_style=True, width=1 << 20)
    return text.removesuffix("\n").removesuffix("...").strip()


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.from_regex(r"[a-z]{1,6}", fullmatch=True), scalars), max_size=6))
def test_fast_reader_agrees_on_lines_built_from_yaml_pieces(pairs: list[tuple[str, Any]]) -> None:
    text = "".join(f"{key}: {_flow(value)}\n" for key, value in pairs)
    try:
        expected = yaml.load(text, Loader=yaml.CSafeLoader)
    except yaml.YAMLError:
        return
    try:
        fast = ticket_yaml._fast(text)
    except ticket_yaml._UnsupportedError:
        return
    assert fast == expected
