"""Broken transcripts: nothing crashes, and every fault is counted where it belongs.

The variants live in ``tests/transcripts/<harness>/broken/`` and are made by
``broken_variants.py`` from each harness's five-steps recording.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.harnesses.broken_variants import HARNESSES, HUGE, VARIANTS, build

from tether.events.accounting import Ledger, apply
from tether.events.lines import iter_lines
from tether.events.model import MalformedLine, ToolResult, UnknownLine
from tether.harnesses import get_harness
from tether.testing.transcripts import Transcript, count_transcript, find_transcripts

TRANSCRIPTS = Path(__file__).parents[1] / "transcripts"
BROKEN = [t for h in HARNESSES for t in find_transcripts(TRANSCRIPTS, h, subfolder="broken")]


def _expected(t: Transcript) -> dict[str, object]:
    name = t.name.removeprefix("broken/")
    data: dict[str, object] = json.loads((t.stream.parent / f"{name}.expected.json").read_text())
    return data


def test_every_harness_has_every_variant() -> None:
    assert len(BROKEN) == len(HARNESSES) * len(VARIANTS)
    names = {t.name for t in BROKEN}
    assert names == {f"broken/{v.name}" for v in VARIANTS}


@pytest.mark.parametrize("t", BROKEN, ids=lambda t: t.id)
def test_broken_variant_is_counted_not_crashed(t: Transcript) -> None:
    expected = _expected(t)
    ledger = count_transcript(get_harness(t.harness), t)
    assert ledger.iterations == expected["iterations"]
    assert ledger.tool_calls == expected["tool_calls"]
    assert ledger.tool_results == expected["tool_results"]
    assert ledger.open_tool_calls == expected["open_tool_calls"]
    assert ledger.session_id == expected["session_id"]
    assert ledger.malformed_lines == expected["malformed_lines"]
    assert ledger.unknown_lines == expected["unknown_lines"]
    assert ledger.final_status == expected["final_status"]


@pytest.mark.parametrize("harness", HARNESSES)
def test_truncated_last_line_is_one_malformed_line(harness: str) -> None:
    (t,) = [t for t in BROKEN if t.id == f"{harness}/broken/truncated-last-line"]
    assert not t.stream.read_bytes().endswith(b"\n")
    *_, last = t.lines()
    events = get_harness(harness).parse_line(last)
    assert [type(e) for e in events] == [MalformedLine]


@pytest.mark.parametrize("harness", HARNESSES)
def test_unanswered_call_stays_open(harness: str) -> None:
    (t,) = [t for t in BROKEN if t.id == f"{harness}/broken/unanswered-call"]
    ledger = count_transcript(get_harness(harness), t)
    assert ledger.open_tool_calls == 1
    assert (ledger.tool_calls, ledger.tool_results) == (5, 4)
    (still_open,) = ledger.open_calls.values()
    assert "4" in still_open.call_id or "4" in json.dumps(still_open.input)


@pytest.mark.parametrize("harness", HARNESSES)
def test_unknown_lines_keep_their_type(harness: str) -> None:
    (t,) = [t for t in BROKEN if t.id == f"{harness}/broken/unknown-type"]
    adapter = get_harness(harness)
    unknown = [
        e for line in t.lines() for e in adapter.parse_line(line) if isinstance(e, UnknownLine)
    ]
    assert len(unknown) == 2
    assert "tether.future_event" in unknown[0].raw or "narrator" in unknown[0].raw
    assert unknown[1].raw == "[1, 2, 3]"


@pytest.mark.parametrize("harness", HARNESSES)
def test_ten_mib_line_is_one_clipped_malformed_record(harness: str) -> None:
    (t,) = [t for t in BROKEN if t.id == f"{harness}/broken/huge-line"]
    adapter = get_harness(harness)
    lengths = []
    bad: list[MalformedLine] = []
    for line in t.lines():
        lengths.append(len(line))
        bad += [e for e in adapter.parse_line(line) if isinstance(e, MalformedLine)]
    assert max(lengths) == HUGE
    (record,) = bad
    assert len(record.raw) <= 2048


@pytest.mark.parametrize("harness", HARNESSES)
def test_ten_mib_tool_output_is_a_normal_result(harness: str) -> None:
    (t,) = [t for t in BROKEN if t.id == f"{harness}/broken/huge-output"]
    adapter = get_harness(harness)
    ledger = Ledger()
    sizes = []
    for line in t.lines():
        for event in adapter.parse_line(line):
            apply(ledger, event)
            if isinstance(event, ToolResult):
                sizes.append(event.output_size)
    assert sizes[0] >= HUGE
    assert max(sizes[1:]) < 1024
    assert ledger.tool_results == 5
    assert ledger.malformed_lines == 0


@pytest.mark.parametrize("harness", HARNESSES)
def test_oversize_cut_by_framing_counts_as_malformed(harness: str) -> None:
    """With a line limit below 10 MiB, iter_lines cuts the line; the count holds."""
    (t,) = [t for t in BROKEN if t.id == f"{harness}/broken/huge-line"]
    adapter = get_harness(harness)
    ledger = Ledger()
    with t.open_stream() as stream:
        for line in iter_lines(stream, max_line=1024 * 1024):
            for event in adapter.parse_line(line):
                apply(ledger, event)
    assert ledger.malformed_lines == 1
    assert ledger.tool_calls == 5


@pytest.mark.parametrize("harness", HARNESSES)
def test_committed_variants_are_what_the_generator_makes(harness: str) -> None:
    folder = TRANSCRIPTS / harness / "broken"
    for name, content in build(harness).items():
        assert (folder / name).read_bytes() == content, f"regenerate {folder / name}"
