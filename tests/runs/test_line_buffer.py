"""Framing of a live stream: any chunking gives the same lines."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tether.events.lines import OVERSIZE
from tether.runs.stream import LineBuffer


def _frame(data: bytes, cuts: list[int], max_line: int = 1 << 20) -> list[bytes]:
    buf = LineBuffer(max_line)
    out: list[bytes] = []
    last = 0
    for cut in sorted(set(c % (len(data) + 1) for c in cuts)):
        out += buf.feed(data[last:cut])
        last = cut
    out += buf.feed(data[last:])
    return out + buf.flush()


@given(
    st.lists(st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")), max_size=20),
    st.lists(st.integers(min_value=0, max_value=10_000), max_size=30),
    st.booleans(),
)
def test_any_chunking_gives_the_same_lines(
    lines: list[bytes], cuts: list[int], trailing_newline: bool
) -> None:
    data = b"\n".join(lines) + (b"\n" if trailing_newline and lines else b"")
    expected = data.split(b"\n")
    if expected and expected[-1] == b"":
        expected.pop()
    assert _frame(data, cuts) == expected


def test_oversize_line_becomes_one_marker_and_the_rest_survives() -> None:
    big = b"x" * 5000
    data = b"first\n" + big + b"\nlast\n"
    for size in (1, 7, 100, 4096, len(data)):
        cuts = list(range(size, len(data), size))
        got = _frame(data, cuts, max_line=1000)
        assert got[0] == b"first" and got[2] == b"last"
        assert got[1].startswith(OVERSIZE) and len(got) == 3


def test_unterminated_oversize_tail_is_reported_on_flush() -> None:
    got = _frame(b"ok\n" + b"y" * 3000, [10, 1000, 2000], max_line=1000)
    assert got[0] == b"ok" and got[1].startswith(OVERSIZE) and len(got) == 2
