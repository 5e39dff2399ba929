"""The conformance suite every harness adapter must pass.

It checks what the supervisor relies on, against recorded transcripts of the
harness (see :mod:`tether.testing.transcripts` for their layout):

- ``counts``: the ledger of each transcript equals its expected iterations,
  tool calls, tool results and open calls (and malformed/unknown lines and the
  final status where the expected file names them);
- ``session_id``: the session id is found (or, where the recording has none,
  not invented);
- ``bad_lines``: non-JSON, truncated, oversize, badly encoded and too deeply
  nested lines are recorded as ``MalformedLine``, JSON of an unknown type as
  ``UnknownLine``, and nothing raises;
- ``open_calls``: a stream cut right after a tool call started counts that call
  as open (not checked for an adapter that declares ``announces_calls =
  False``: Vibe prints a tool call only once it has finished);
- ``command``: ``build_command`` returns an argv list (the prompt one element of
  it, never a shell string), passes model, session id and turn cap where the
  harness declares it can, and never a resume flag;
- ``purity``: the same line parsed twice gives equal events.

From a third-party adapter's own tests, either call it directly::

    from tether.testing.conformance import assert_conformance

    def test_my_adapter_conforms():
        assert_conformance(MyHarness(), Path(__file__).parent / "transcripts")

or subclass :class:`AdapterConformance` to get one pytest test per check::

    class TestMyAdapter(AdapterConformance):
        harness = MyHarness()
        transcripts_dir = Path(__file__).parent / "transcripts"
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import ClassVar

from tether.events.accounting import Ledger, apply
from tether.events.lines import OVERSIZE
from tether.events.model import AnyEvent, MalformedLine, UnknownLine
from tether.harnesses.base import Harness, RunSpec
from tether.testing.transcripts import Transcript, count_transcript, find_transcripts

# Spellings that resume or continue an earlier session in one agent CLI or
# another (claude/pi/vibe ``-c``/``--continue``, ``-r``/``--resume``, codex's
# ``resume``/``fork`` subcommands and ``--last``). A fresh run uses none of them.
RESUME_TOKENS = frozenset(
    {"--resume", "-r", "--continue", "-c", "resume", "--last", "--fork", "fork"}
)
PROMPT = "tether conformance prompt: count to three"
MODEL = "tether-conformance-model"
TURN_CAP = 7
UNKNOWN_PROBE = b'{"type":"tether.conformance.unknown","data":{"x":1}}'
CHECKS = ("counts", "session_id", "bad_lines", "open_calls", "command", "purity")


@dataclass(frozen=True)
class Finding:
    """One way an adapter falls short: which check, on which transcript, and how."""

    check: str
    message: str
    transcript: str | None = None

    def __str__(self) -> str:
        where = f" [{self.transcript}]" if self.transcript else ""
        return f"{self.check}{where}: {self.message}"


class ConformanceError(AssertionError):
    def __init__(self, harness: str, findings: Sequence[Finding]) -> None:
        lines = "\n".join(f"  - {f}" for f in findings)
        super().__init__(f"harness {harness!r} fails {len(findings)} check(s):\n{lines}")
        self.findings = tuple(findings)


def _parse(harness: Harness, line: bytes, check: str) -> tuple[list[AnyEvent], list[Finding]]:
    try:
        return harness.parse_line(line), []
    except Exception as exc:  # the point of the check: parse_line must be total
        return [], [Finding(check, f"parse_line raised {type(exc).__name__}: {exc}")]


def check_counts(harness: Harness, transcript: Transcript) -> list[Finding]:
    if harness.iteration_source == "session_file" and transcript.session is None:
        message = "iterations come from the harness's session file; files.session is missing"
        return [Finding("counts", message, transcript.id)]
    try:
        ledger = count_transcript(harness, transcript)
    except Exception as exc:
        return [Finding("counts", f"counting raised {type(exc).__name__}: {exc}", transcript.id)]
    exp = transcript.expected
    pairs: list[tuple[str, object, object]] = [
        ("iterations", ledger.iterations, exp.iterations),
        ("tool_calls", ledger.tool_calls, exp.tool_calls),
        ("tool_results", ledger.tool_results, exp.tool_results),
        ("open_tool_calls", ledger.open_tool_calls, exp.open_tool_calls),
    ]
    if exp.malformed_lines is not None:
        pairs.append(("malformed_lines", ledger.malformed_lines, exp.malformed_lines))
    if exp.unknown_lines is not None:
        pairs.append(("unknown_lines", ledger.unknown_lines, exp.unknown_lines))
    if exp.checks_final_status:
        pairs.append(("final_status", ledger.final_status, exp.final_status))
    if exp.malformed_lines is None and ledger.malformed_lines:
        pairs.append(("malformed_lines", ledger.malformed_lines, 0))
    if exp.unknown_lines is None and ledger.unknown_lines:
        # A recording's every line type should be known to its adapter.
        pairs.append(("unknown_lines", ledger.unknown_lines, 0))
    return [
        Finding("counts", f"{name} is {got!r}, expected {want!r}", transcript.id)
        for name, got, want in pairs
        if got != want
    ]


def check_session_id(harness: Harness, transcript: Transcript) -> list[Finding]:
    try:
        ledger = count_transcript(harness, transcript)
    except Exception as exc:
        return [Finding("session_id", f"counting raised {type(exc).__name__}", transcript.id)]
    want = transcript.expected.session_id
    if ledger.session_id == want:
        return []
    what = "not found" if ledger.session_id is None else f"{ledger.session_id!r}"
    return [Finding("session_id", f"session id {what}, expected {want!r}", transcript.id)]


def bad_line_probes(sample: bytes | None) -> list[tuple[str, bytes, type[AnyEvent] | None]]:
    """(label, line, the event it must yield: Malformed, Unknown, or either when None)."""
    probes: list[tuple[str, bytes, type[AnyEvent] | None]] = [
        ("non-JSON noise", b"Reading additional input from stdin...", MalformedLine),
        ("half an object", b'{"type": "oops", ', MalformedLine),
        ("oversize line cut by iter_lines", OVERSIZE + b'{"type": "x", "pad": "', MalformedLine),
        ("invalid UTF-8", b'{"type": "\xff\xfe"}', None),
        ("too deeply nested", b'{"type": "x", "data": ' + b"[" * 20000 + b"]" * 20000 + b"}", None),
        ("unknown event type", UNKNOWN_PROBE, UnknownLine),
        ("JSON array", b"[1, 2, 3]", None),
        ("JSON string", b'"just text"', None),
        ("JSON null", b"null", None),
    ]
    if sample:
        probes.append(("truncated real line", sample[: max(1, len(sample) // 2)], MalformedLine))
    return probes


def check_bad_lines(harness: Harness, sample: bytes | None = None) -> list[Finding]:
    findings: list[Finding] = []
    for blank in (b"", b"   ", b"\r"):
        events, errors = _parse(harness, blank, "bad_lines")
        findings += errors
        if events:
            findings.append(Finding("bad_lines", f"blank line {blank!r} gave {len(events)} events"))
    for label, line, want in bad_line_probes(sample):
        events, errors = _parse(harness, line, "bad_lines")
        if errors:
            findings += [replace(e, message=f"{label}: {e.message}") for e in errors]
            continue
        recorded = [e for e in events if isinstance(e, MalformedLine | UnknownLine)]
        if want is not None and not any(isinstance(e, want) for e in recorded):
            kinds = [type(e).__name__ for e in events]
            findings.append(Finding("bad_lines", f"{label}: expected {want.__name__}, got {kinds}"))
        elif want is None and not recorded:
            kinds = [type(e).__name__ for e in events]
            findings.append(
                Finding("bad_lines", f"{label}: not recorded as malformed/unknown, got {kinds}")
            )
    return findings


def check_open_calls(harness: Harness, transcript: Transcript) -> list[Finding]:
    """Cut the stream right after the first tool call starts: it must be open."""
    if transcript.expected.tool_calls == 0 or not getattr(harness, "announces_calls", True):
        return []
    ledger = Ledger()
    for line in transcript.lines():
        events, errors = _parse(harness, line, "open_calls")
        if errors:
            return [replace(e, transcript=transcript.id) for e in errors]
        for event in events:
            apply(ledger, event)
        if ledger.open_tool_calls:
            if ledger.tool_calls < ledger.open_tool_calls:
                return [Finding("open_calls", "more calls open than started", transcript.id)]
            return []
    return [Finding("open_calls", "no tool call was ever open in the stream", transcript.id)]


def check_command(harness: Harness) -> list[Finding]:
    findings: list[Finding] = []
    session_id = str(uuid.uuid4())
    spec = RunSpec(prompt=PROMPT, model=MODEL, session_id=session_id, max_turns=TURN_CAP)
    try:
        argv = harness.build_command(spec)
        again = harness.build_command(spec)
        bare = harness.build_command(RunSpec(prompt=PROMPT))
    except Exception as exc:
        return [Finding("command", f"build_command raised {type(exc).__name__}: {exc}")]
    if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv) or not argv:
        return [Finding("command", f"argv must be a non-empty list of str, got {argv!r}")]
    if argv != again:
        findings.append(Finding("command", "build_command is not deterministic"))
    if harness.executable not in argv:
        findings.append(Finding("command", f"executable {harness.executable!r} not in {argv}"))
    if argv.count(PROMPT) != 1:
        findings.append(Finding("command", "the prompt must be exactly one argv element"))
    for args in (argv, bare):
        resume = [a for a in args if a != PROMPT and _is_resume(a)]
        if resume:
            findings.append(Finding("command", f"resume flag(s) {resume} in {args}"))
    if not any(MODEL in a for a in argv):
        findings.append(Finding("command", "the model is not passed"))
    if MODEL in " ".join(bare):
        findings.append(Finding("command", "a model is passed though none was asked for"))
    has_sid = any(session_id in a for a in argv)
    if harness.accepts_session_id and not has_sid:
        findings.append(Finding("command", "accepts_session_id, but the session id is not passed"))
    if not harness.accepts_session_id and has_sid:
        findings.append(Finding("command", "passes a session id it says it cannot accept"))
    if harness.has_turn_cap and str(TURN_CAP) not in argv:
        findings.append(Finding("command", "has_turn_cap, but the turn cap is not passed"))
    return findings


def _is_resume(arg: str) -> bool:
    return arg in RESUME_TOKENS or arg.split("=", 1)[0] in {"--resume", "--continue", "--fork"}


def check_purity(harness: Harness, transcript: Transcript) -> list[Finding]:
    for number, line in enumerate(transcript.lines(), 1):
        first, errors = _parse(harness, line, "purity")
        second, _ = _parse(harness, line, "purity")
        if errors:
            return [replace(e, transcript=transcript.id) for e in errors]
        if first != second:
            return [Finding("purity", f"line {number} parsed twice differs", transcript.id)]
    return []


def _first_line(transcripts: Iterable[Transcript]) -> bytes | None:
    for transcript in transcripts:
        for line in transcript.lines():
            if len(line.strip()) > 2:
                return line
    return None


def run_conformance(
    harness: Harness,
    transcripts: Path | Sequence[Transcript],
    checks: Iterable[str] = CHECKS,
) -> list[Finding]:
    """Every finding of ``checks`` over ``transcripts`` (a folder or a list)."""
    found = find_transcripts(transcripts) if isinstance(transcripts, Path) else list(transcripts)
    wanted = set(checks)
    unknown_checks = wanted - set(CHECKS)
    if unknown_checks:
        raise ValueError(f"unknown checks {sorted(unknown_checks)}; known: {', '.join(CHECKS)}")
    findings: list[Finding] = []
    per_transcript: dict[str, Callable[[Harness, Transcript], list[Finding]]] = {
        "counts": check_counts,
        "session_id": check_session_id,
        "open_calls": check_open_calls,
        "purity": check_purity,
    }
    if wanted & set(per_transcript) and not found:
        findings.append(Finding("counts", "no transcripts (<name>.expected.json) were given"))
    for name, check in per_transcript.items():
        if name in wanted:
            for transcript in found:
                findings += check(harness, transcript)
    if "bad_lines" in wanted:
        findings += check_bad_lines(harness, _first_line(found))
    if "command" in wanted:
        findings += check_command(harness)
    return findings


def assert_conformance(
    harness: Harness,
    transcripts: Path | Sequence[Transcript],
    checks: Iterable[str] = CHECKS,
) -> None:
    """Raise :class:`ConformanceError` listing every finding, if there is any."""
    findings = run_conformance(harness, transcripts, checks)
    if findings:
        raise ConformanceError(harness.name, findings)


class AdapterConformance:
    """A pytest mixin: subclass as ``Test…`` and set ``harness`` and ``transcripts_dir``."""

    harness: ClassVar[Harness]
    transcripts_dir: ClassVar[Path]

    def _check(self, *checks: str) -> None:
        assert_conformance(self.harness, self.transcripts_dir, checks)

    def test_counts_match(self) -> None:
        self._check("counts")

    def test_session_id_found(self) -> None:
        self._check("session_id")

    def test_bad_lines_recorded(self) -> None:
        self._check("bad_lines")

    def test_open_calls_counted(self) -> None:
        self._check("open_calls")

    def test_command_has_no_resume_flag(self) -> None:
        self._check("command")

    def test_parse_line_is_pure(self) -> None:
        self._check("purity")
