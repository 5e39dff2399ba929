"""``tether events count`` through the real console script, in a real subprocess."""

from __future__ import annotations

import fcntl
import json
import os
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path
from typing import Any

import pytest

TETHER = str(Path(sys.executable).parent / "tether")
ROOT = Path(__file__).parents[2]
TRANSCRIPTS = ROOT / "tests" / "transcripts"
CLAUDE = TRANSCRIPTS / "claude-code"
DOC = ROOT / "docs" / "reference" / "cli-events.md"
MB = 1024 * 1024


def _env() -> dict[str, str]:
    return {**os.environ, "COLUMNS": "100", "NO_COLOR": "1", "TERM": "dumb"}


def _tether(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [TETHER, *args],
        input=None if stdin is None else stdin.decode(),
        capture_output=True,
        text=True,
        env=_env(),
        timeout=60,
        check=False,
    )


def _recorded() -> list[tuple[str, str]]:
    return sorted(
        (path.parent.name, path.name.removesuffix(".expected.json"))
        for path in TRANSCRIPTS.glob("*/*.expected.json")
    )


@pytest.mark.slow
@pytest.mark.parametrize(("harness", "scenario"), _recorded())
def test_recorded_transcript_counts_equal_expected(harness: str, scenario: str) -> None:
    folder = TRANSCRIPTS / harness
    expected = json.loads((folder / f"{scenario}.expected.json").read_text())
    args = ["events", "count", "--harness", harness, "--json"]
    needs_session = expected["iterations_from"] != "stream"
    if needs_session:
        args += ["--session", str(folder / f"{scenario}.session.jsonl")]
    done = _tether(*args, str(folder / f"{scenario}.jsonl"))
    assert done.returncode == 0, done.stderr
    counted = json.loads(done.stdout)
    assert counted["iterations"] == expected["iterations"]
    assert counted["iterations_exact"] is True
    assert counted["iteration_source"] == ("session_file" if needs_session else "stream")
    assert counted["tool_calls"] == expected["tool_calls"]
    assert counted["tool_results"] == expected["tool_results"]
    assert counted["open_tool_calls"] == expected["tool_calls"] - expected["tool_results"]
    assert counted["session_id"] == expected["session_id"]
    assert counted["malformed_lines"] == 0
    assert counted["note"] is None


def test_json_shape_pinned_for_claude_code_five_steps() -> None:
    done = _tether(
        "events", "count", "--harness", "claude-code", "--json", str(CLAUDE / "five-steps.jsonl")
    )
    assert done.returncode == 0, done.stderr
    counted = json.loads(done.stdout)
    assert counted["iterations"] == 5
    assert counted["tool_calls"] == 5
    assert counted["tool_results"] == 5
    assert counted["open_tool_calls"] == 0
    assert counted["session_id"] == "0d9e0eb5-eefd-4768-85af-f044cdcfaec2"
    assert counted["final_status"] == "success"
    assert counted["usage"]["input_tokens"] == 63161
    assert counted["usage"]["output_tokens"] == 60
    assert {"malformed_lines", "unknown_lines", "usage", "iterations_exact", "note"} <= set(counted)


def test_table_output() -> None:
    done = _tether("events", "count", "--harness", "claude-code", str(CLAUDE / "forever.jsonl"))
    assert done.returncode == 0, done.stderr
    rows = {
        cells[0]: cells[1]
        for line in done.stdout.splitlines()
        if len(cells := [c.strip() for c in line.strip("│┃ ").split("│")]) == 2
    }
    assert rows["iterations"] == "63"
    assert rows["tool calls"] == "63"
    assert rows["tool results"] == "63"
    assert rows["open tool calls"] == "0"
    assert rows["session id"] == "26b66eac-9098-4695-96b4-824ef9efcb07"
    assert "bound" not in done.stdout
    assert "note:" not in done.stdout


def test_codex_without_session_file_says_the_count_is_a_bound() -> None:
    stream = str(TRANSCRIPTS / "codex" / "five-steps.jsonl")
    as_json = _tether("events", "count", "--harness", "codex", "--json", stream)
    assert as_json.returncode == 0, as_json.stderr
    counted = json.loads(as_json.stdout)
    assert counted["iterations_exact"] is False
    assert counted["iteration_source"] == "bound"
    assert "bound" in counted["note"]
    assert "--session" in counted["note"]
    table = _tether("events", "count", "--harness", "codex", stream)
    assert table.returncode == 0, table.stderr
    assert "(bound)" in table.stdout
    assert "note: iterations is an upper bound" in table.stdout
    # 5 command items + 1 agent message: at least the 5 real model calls
    assert counted["iterations"] == 6


def test_session_file_for_a_stream_harness_is_not_read() -> None:
    done = _tether(
        "events",
        "count",
        "--harness",
        "claude-code",
        "--json",
        "--session",
        str(CLAUDE / "five-steps.session.jsonl"),
        str(CLAUDE / "five-steps.jsonl"),
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["iterations"] == 5
    assert "not read" in done.stderr


def test_unknown_harness_exits_3_with_the_known_names() -> None:
    done = _tether("events", "count", "--harness", "claude", str(CLAUDE / "five-steps.jsonl"))
    assert done.returncode == 3
    assert "unknown harness 'claude'" in done.stderr
    assert "claude-code" in done.stderr
    assert "codex" in done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout == ""


def test_missing_file_exits_2(tmp_path: Path) -> None:
    missing = tmp_path / "nope.jsonl"
    done = _tether("events", "count", "--harness", "claude-code", str(missing))
    assert done.returncode == 2
    assert f"no such file: {missing}" in done.stderr
    assert "Traceback" not in done.stderr


def test_missing_session_file_exits_2(tmp_path: Path) -> None:
    missing = tmp_path / "rollout.jsonl"
    done = _tether(
        "events",
        "count",
        "--harness",
        "claude-code",
        "--session",
        str(missing),
        str(CLAUDE / "five-steps.jsonl"),
    )
    assert done.returncode == 2
    assert f"--session: no such file: {missing}" in done.stderr
    assert done.stdout == ""


def test_stdin_twice_exits_2() -> None:
    done = _tether("events", "count", "--harness", "claude-code", "--session", "-", "-")
    assert done.returncode == 2
    assert "cannot both be stdin" in done.stderr


def test_directory_exits_2(tmp_path: Path) -> None:
    done = _tether("events", "count", "--harness", "claude-code", str(tmp_path))
    assert done.returncode == 2
    assert "is a directory" in done.stderr


def test_missing_argument_exits_2() -> None:
    done = _tether("events", "count", "--harness", "claude-code")
    assert done.returncode == 2
    assert "FILE" in done.stderr


def test_broken_stream_on_stdin_is_counted() -> None:
    lines = (CLAUDE / "five-steps.jsonl").read_bytes().splitlines(keepends=True)
    broken = b"".join(
        [b"garbage before json\n", *lines[:-1], b'{"type":"new_thing"}\n', lines[-1][:30]]
    )
    done = _tether("events", "count", "--harness", "claude-code", "--json", "-", stdin=broken)
    assert done.returncode == 0, done.stderr
    counted = json.loads(done.stdout)
    assert counted["malformed_lines"] == 2
    assert counted["unknown_lines"] == 1
    assert counted["iterations"] == 5
    assert counted["final_status"] is None


def _pipe_pending(fd: int) -> int:
    """Bytes written into a pipe and not yet read by the other end."""
    raw = fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0")
    pending: int = struct.unpack("i", raw)[0]
    return pending


def _write_in_pieces(fd: int, data: bytes) -> int:
    """Write ``data`` in pieces of odd sizes that cut lines (and UTF-8) anywhere.

    Before the next piece goes in, wait until the reader has drained the pipe,
    so that each piece really arrives as a separate partial read.
    """
    pieces = 0
    pos, size = 0, 1
    while pos < len(data):
        os.write(fd, data[pos : pos + size])
        pos += size
        size = size * 7 % 997 + 1
        pieces += 1
        deadline = time.monotonic() + 30
        while _pipe_pending(fd) and time.monotonic() < deadline:
            time.sleep(0.001)
        assert _pipe_pending(fd) == 0, "the counter stopped reading its stdin"
    return pieces


def test_live_pipe_written_in_pieces() -> None:
    data = (CLAUDE / "forever.jsonl").read_bytes()
    child = subprocess.Popen(
        [TETHER, "events", "count", "--harness", "claude-code", "--json", "-"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_env(),
    )
    assert child.stdin is not None
    try:
        pieces = _write_in_pieces(child.stdin.fileno(), data)
        out, err = child.communicate(timeout=60)  # closes stdin: end of stream
    finally:
        if child.returncode is None:
            child.kill()
            child.communicate()
    assert child.returncode == 0, err
    assert pieces > 100
    counted = json.loads(out)
    assert counted["iterations"] == 63
    assert counted["tool_calls"] == 63
    assert counted["tool_results"] == 63
    assert counted["session_id"] == "26b66eac-9098-4695-96b4-824ef9efcb07"


# Runs argv as its child and writes the child's peak RSS and exit code to a file.
# The test process cannot take ru_maxrss of its own child: on Linux that also
# counts the RSS of the process it was forked from (carried over exec).
RSS_LAUNCHER = """
import os, subprocess, sys
child = subprocess.Popen(sys.argv[2:])
_, status, usage = os.wait4(child.pid, 0)
with open(sys.argv[1], "w") as report:
    report.write(f"{usage.ru_maxrss} {os.waitstatus_to_exitcode(status)}")
"""


def _count_with_peak_rss(path: Path) -> tuple[dict[str, Any], int]:
    """Run the counter on ``path`` (as stdin); its JSON and its own peak RSS in bytes."""
    report = path.parent / "rss-report"
    count = [TETHER, "events", "count", "--harness", "claude-code", "--json", "-"]
    with path.open("rb") as stdin:
        done = subprocess.run(
            [sys.executable, "-c", RSS_LAUNCHER, str(report), *count],
            stdin=stdin,
            capture_output=True,
            env=_env(),
            timeout=120,
            check=False,
        )
    assert done.returncode == 0, done.stderr
    maxrss_kib, returncode = map(int, report.read_text().split())
    assert returncode == 0, done.stderr
    counted: dict[str, Any] = json.loads(done.stdout)
    return counted, maxrss_kib * 1024


def _write_repeated(path: Path, block: bytes, size: int) -> int:
    times = max(1, size // len(block))
    chunk = block * max(1, MB // len(block))
    per_chunk = len(chunk) // len(block)
    with path.open("wb") as f:
        left = times
        while left >= per_chunk:
            f.write(chunk)
            left -= per_chunk
        f.write(block * left)
    return times


@pytest.mark.slow
def test_peak_rss_stays_flat_on_a_large_file(tmp_path: Path) -> None:
    block = (CLAUDE / "forever.jsonl").read_bytes()
    small_path, large_path = tmp_path / "small.jsonl", tmp_path / "large.jsonl"
    _write_repeated(small_path, block, 1 * MB)
    times = _write_repeated(large_path, block, 300 * MB)
    try:
        _, small_rss = _count_with_peak_rss(small_path)
        large, large_rss = _count_with_peak_rss(large_path)
    finally:
        large_path.unlink()
    assert large["tool_calls"] == 63 * times
    assert large["malformed_lines"] == 0
    assert large_rss < 150 * MB, f"peak RSS {large_rss / MB:.0f} MB on a 300 MB file"
    assert large_rss < small_rss + 40 * MB, (small_rss / MB, large_rss / MB)


def test_reference_doc_shows_the_current_help() -> None:
    done = _tether("events", "count", "--help")
    assert done.returncode == 0
    assert done.stdout.strip() in DOC.read_text()


def _doc_block(lang: str) -> str:
    text = DOC.read_text()
    start = text.index(f"```{lang}\n") + len(lang) + 4
    return text[start : text.index("```", start)]


def test_reference_doc_json_example_is_the_real_output() -> None:
    done = _tether(
        "events", "count", "--harness", "claude-code", "--json", str(CLAUDE / "five-steps.jsonl")
    )
    assert json.loads(_doc_block("json")) == json.loads(done.stdout)


def test_reference_doc_python_example_runs(tmp_path: Path) -> None:
    (tmp_path / "run.jsonl").write_bytes((CLAUDE / "five-steps.jsonl").read_bytes())
    done = subprocess.run(
        [sys.executable, "-c", _doc_block("python")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["5", "5", "True"]
