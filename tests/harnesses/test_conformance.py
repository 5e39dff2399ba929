"""Every built-in adapter passes the public conformance suite, and the suite
catches an adapter that breaks the contract."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import msgspec
import pytest

from tether.events.model import AnyEvent, SessionStarted, ToolCallStarted, ToolResult
from tether.harnesses import get_harness
from tether.harnesses.base import IterationSource, RunSpec
from tether.harnesses.codex import CodexHarness
from tether.testing.conformance import (
    CHECKS,
    AdapterConformance,
    ConformanceError,
    assert_conformance,
    run_conformance,
)
from tether.testing.transcripts import TranscriptError, find_transcripts

TRANSCRIPTS = Path(__file__).parents[1] / "transcripts"
HARNESSES = ("claude-code", "codex", "copilot", "pi", "vibe")


@pytest.mark.parametrize("harness", HARNESSES)
def test_adapter_conforms_on_its_recordings(harness: str) -> None:
    assert_conformance(get_harness(harness), TRANSCRIPTS / harness)


@pytest.mark.parametrize("harness", HARNESSES)
def test_adapter_conforms_on_its_broken_variants(harness: str) -> None:
    broken = find_transcripts(TRANSCRIPTS, harness, subfolder="broken")
    checks = ("counts", "session_id", "open_calls")
    assert_conformance(get_harness(harness), broken, checks)


class TestCodexThroughTheMixin(AdapterConformance):
    """What a third-party adapter's test module looks like."""

    harness = CodexHarness()
    transcripts_dir = TRANSCRIPTS / "codex"


class _Line(msgspec.Struct):
    t: str = ""
    id: str = ""


class SloppyHarness:
    """Breaks every rule: raises on junk, resumes, miscounts, ignores its caps."""

    name: ClassVar[str] = "sloppy"
    executable: ClassVar[str] = "sloppy"
    iteration_source: ClassVar[IterationSource] = "stream"
    accepts_session_id: ClassVar[bool] = True
    has_turn_cap: ClassVar[bool] = True

    def build_command(self, spec: RunSpec) -> list[str]:
        return [self.executable, "--continue", f"sloppy -p '{spec.prompt}'"]

    def parse_line(self, line: bytes) -> list[AnyEvent]:
        obj = msgspec.json.decode(line, type=_Line)  # raises on anything odd
        if obj.t == "start":
            return [SessionStarted(session_id=obj.id)]
        if obj.t == "call":
            return [ToolCallStarted(call_id=obj.id, name="x")]
        if obj.t == "result":
            return [ToolResult(call_id=obj.id)]
        return []

    def parse_session_line(self, line: bytes) -> list[AnyEvent]:
        return []

    def session_file(self, session_id: str, env: object) -> Path | None:
        return None


def _write(folder: Path, name: str, lines: list[str], expected: str) -> None:
    (folder / f"{name}.jsonl").write_text("".join(line + "\n" for line in lines))
    (folder / f"{name}.expected.json").write_text(expected)


def test_suite_reports_each_broken_rule(tmp_path: Path) -> None:
    _write(
        tmp_path,
        "run",
        ['{"t":"start","id":"s-1"}', '{"t":"call","id":"c1"}', '{"t":"result","id":"c1"}'],
        '{"iterations": 1, "tool_calls": 1, "tool_results": 1, "session_id": "s-2"}',
    )
    findings = run_conformance(SloppyHarness(), tmp_path)
    failed = {f.check for f in findings}
    assert failed == {"counts", "session_id", "bad_lines", "command"}
    text = "\n".join(str(f) for f in findings)
    assert "iterations is 0, expected 1" in text
    assert "'s-1', expected 's-2'" in text
    assert "parse_line raised" in text
    assert "resume flag(s) ['--continue']" in text
    assert "the prompt must be exactly one argv element" in text
    assert "turn cap is not passed" in text
    with pytest.raises(ConformanceError, match="sloppy"):
        assert_conformance(SloppyHarness(), tmp_path, ["command"])


def test_suite_needs_transcripts_and_known_checks(tmp_path: Path) -> None:
    findings = run_conformance(get_harness("pi"), tmp_path)
    assert [f.message for f in findings if f.check == "counts"] == [
        "no transcripts (<name>.expected.json) were given"
    ]
    with pytest.raises(ValueError, match="unknown checks"):
        run_conformance(get_harness("pi"), tmp_path, ["speed"])
    assert set(CHECKS) >= {"counts", "session_id", "bad_lines", "open_calls", "command"}


def test_session_file_harness_without_session_file_is_reported(tmp_path: Path) -> None:
    src = TRANSCRIPTS / "codex"
    (tmp_path / "five-steps.jsonl").write_bytes((src / "five-steps.jsonl").read_bytes())
    (tmp_path / "five-steps.expected.json").write_text(
        '{"iterations": 5, "tool_calls": 5, "tool_results": 5, '
        '"session_id": "01a22a83-aea5-7dc0-8696-8660b8377ba8"}'
    )
    findings = run_conformance(get_harness("codex"), tmp_path, ["counts"])
    assert len(findings) == 1
    assert "files.session is missing" in findings[0].message


def test_bad_expected_file_is_a_clear_error(tmp_path: Path) -> None:
    _write(tmp_path, "x", ["{}"], '{"iterations": "five", "tool_calls": 1}')
    with pytest.raises(TranscriptError, match="'iterations' must be an integer"):
        find_transcripts(tmp_path)
    _write(tmp_path, "x", ["{}"], '{"iterations": 1, "tool_calls": 1, "tool_results": 1}')
    with pytest.raises(TranscriptError, match="'session_id' is missing"):
        find_transcripts(tmp_path)
