"""Derive the broken transcripts in ``tests/transcripts/<harness>/broken/``.

Each variant starts from the harness's ``five-steps`` recording (5 model steps,
5 tool calls, 5 results; step 2 asks for two calls) and breaks it in one
way. What each must count to is written out here by hand, per harness, from
the recording's known line layout, not computed with the adapter under test.

Regenerate with ``python tests/harnesses/broken_variants.py``; a test checks
that the committed files are exactly what this module makes.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

TRANSCRIPTS = Path(__file__).parents[1] / "transcripts"
HARNESSES = ("claude-code", "codex", "copilot", "pi", "vibe")
HUGE = 10 * 1024 * 1024  # bytes in the one huge line

# Line (0-based) of five-steps.jsonl that starts the fifth tool call (step 4),
# and the line of the first tool result, per harness (see the recordings).
# Vibe prints a tool call only once it is finished (one ``effect`` line, call and
# result at once), so its unanswered call is the fifth effect line with its
# settled state taken out, as a still-running effect looks.
FIFTH_CALL_LINE = {"claude-code": 9, "codex": 11, "copilot": 139, "pi": 63, "vibe": 5}
FIRST_RESULT_LINE = {"claude-code": 2, "codex": 4, "copilot": 37, "pi": 14, "vibe": 1}
# The last line carries the run's end (and, for copilot, the only session id).
LAST_LINE_CARRIES = {
    "claude-code": "result",
    "codex": "turn.completed",
    "copilot": "result",
    "pi": "agent_end",
    "vibe": "the final assistant message (the run's end is in the session journal)",
}

NOISE = [
    b"Reading additional input from stdin...",
    b"\x1b[33mWARN\x1b[0m proxy settings ignored",
    b'{"type": "half a line", ',
    b"\xff\xfe\x00binary junk",
]
BLANKS = [b"", b"   "]


def _unknown_lines(harness: str) -> list[bytes]:
    first = {"type": "tether.future_event", "data": {"x": 1}}
    return [json.dumps(first).encode(), b"[1, 2, 3]"]


@dataclass(frozen=True)
class Variant:
    name: str
    what: str
    make: Callable[[str, list[bytes]], list[bytes]]
    gz: bool = False
    final_newline: bool = True


def _lines(harness: str) -> list[bytes]:
    return (TRANSCRIPTS / harness / "five-steps.jsonl").read_bytes().splitlines()


def _base(harness: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        (TRANSCRIPTS / harness / "five-steps.expected.json").read_text()
    )
    return data


def _truncated(harness: str, lines: list[bytes]) -> list[bytes]:
    last = lines[-1]
    return [*lines[:-1], last[: len(last) // 2]]


def _noise(harness: str, lines: list[bytes]) -> list[bytes]:
    mid = len(lines) // 2
    return [
        NOISE[0],
        *lines[:mid],
        NOISE[1],
        BLANKS[0],
        NOISE[2],
        *lines[mid:],
        BLANKS[1],
        NOISE[3],
    ]


def _unknown(harness: str, lines: list[bytes]) -> list[bytes]:
    first, second = _unknown_lines(harness)
    mid = len(lines) // 2
    return [*lines[:2], first, *lines[2:mid], second, *lines[mid:]]


def _unanswered(harness: str, lines: list[bytes]) -> list[bytes]:
    cut = lines[: FIFTH_CALL_LINE[harness] + 1]
    if harness == "vibe":
        effect = json.loads(cut[-1])
        del effect["state"]
        effect["generationStatus"] = "in_progress"
        cut[-1] = json.dumps(effect).encode()
    return cut


def _huge_line(harness: str, lines: list[bytes]) -> list[bytes]:
    mid = len(lines) // 2
    return [*lines[:mid], b"x" * HUGE, *lines[mid:]]


def _huge_output(harness: str, lines: list[bytes]) -> list[bytes]:
    index = FIRST_RESULT_LINE[harness]
    obj = json.loads(lines[index])
    big = "y" * HUGE
    if harness == "claude-code":
        obj["message"]["content"][0]["content"] = big
        obj["tool_use_result"]["stdout"] = big
    elif harness == "codex":
        obj["item"]["aggregated_output"] = big
    elif harness == "copilot":
        obj["data"]["result"]["content"] = big
        obj["data"]["result"]["detailedContent"] = big
    elif harness == "pi":
        obj["result"]["content"][0]["text"] = big
    else:
        obj["state"]["output"]["stdout"] = big
        obj["state"]["outputText"] = big
    out = list(lines)
    out[index] = json.dumps(obj, separators=(",", ":")).encode()
    return out


VARIANTS = (
    Variant(
        "truncated-last-line",
        "five-steps with its last line cut in half and no final newline",
        _truncated,
        final_newline=False,
    ),
    Variant(
        "noise",
        "five-steps with 4 non-JSON lines (stderr text, ANSI colour, half an object, "
        "invalid UTF-8) and 2 blank lines mixed in",
        _noise,
    ),
    Variant(
        "unknown-type",
        "five-steps with a JSON line of a type the harness does not have and a JSON array",
        _unknown,
    ),
    Variant(
        "unanswered-call",
        "five-steps cut right after the fifth tool call started: its result never comes",
        _unanswered,
    ),
    Variant(
        "huge-line",
        "five-steps with one 10 MiB line of non-JSON in the middle",
        _huge_line,
        gz=True,
    ),
    Variant(
        "huge-output",
        "five-steps whose first tool result carries 10 MiB of output (valid JSON)",
        _huge_output,
        gz=True,
    ),
)


def expected(harness: str, variant: Variant) -> dict[str, Any]:
    base = _base(harness)
    sid: str | None = base["session_id"]
    counts: dict[str, Any] = {
        "iterations": 5,
        "tool_calls": 5,
        "tool_results": 5,
        "open_tool_calls": 0,
        "session_id": sid,
        "malformed_lines": 0,
        "unknown_lines": 0,
        # claude, codex, copilot and pi end with a success line; vibe's journal
        # closes the turn (its stream has no end line).
        "final_status": "success",
    }
    if variant.name == "truncated-last-line":
        counts["malformed_lines"] = 1
        if harness != "vibe":
            counts["final_status"] = None
        if harness == "copilot":
            counts["session_id"] = None  # only the result line names it
    elif variant.name == "noise":
        counts["malformed_lines"] = len(NOISE)
    elif variant.name == "unknown-type":
        counts["unknown_lines"] = 2
    elif variant.name == "unanswered-call":
        counts.update(iterations=4, tool_results=4, open_tool_calls=1, final_status=None)
        if harness == "copilot":
            counts["session_id"] = None
    elif variant.name == "huge-line":
        counts["malformed_lines"] = 1
    files: dict[str, str] = {"stream": _stream_name(variant)}
    if harness in ("codex", "vibe"):
        files["session"] = (
            "unanswered-call.session.jsonl"
            if variant.name == "unanswered-call"
            else "../five-steps.session.jsonl"
        )
    return {
        "harness": harness,
        "scenario": f"broken/{variant.name}",
        "derived_from": "five-steps",
        "what": variant.what,
        "last_line_carries": LAST_LINE_CARRIES[harness],
        **counts,
        "files": files,
    }


def _stream_name(variant: Variant) -> str:
    return f"{variant.name}.jsonl" + (".gz" if variant.gz else "")


def _codex_session_cut() -> bytes:
    """The rollout up to the fourth completed model response (step 4)."""
    out: list[bytes] = []
    records = 0
    for line in (TRANSCRIPTS / "codex" / "five-steps.session.jsonl").read_bytes().splitlines():
        out.append(line)
        if b'"type":"token_usage_record"' in line:
            records += 1
            if records == 4:
                break
    return b"\n".join(out) + b"\n"


def _vibe_session_cut() -> bytes:
    """The journal up to the fourth completion result and the tool call it asked for."""
    out: list[bytes] = []
    results = 0
    for line in (TRANSCRIPTS / "vibe" / "five-steps.session.jsonl").read_bytes().splitlines():
        record = json.loads(line)
        result = record.get("payload", {}).get("result")
        if isinstance(result, dict) and str(result.get("type")).startswith("completion_"):
            results += 1
            if results == 5:
                break
        out.append(line)
    return b"\n".join(out) + b"\n"


def build(harness: str) -> dict[str, bytes]:
    """File name → content of every broken variant of ``harness``."""
    files: dict[str, bytes] = {}
    lines = _lines(harness)
    for variant in VARIANTS:
        body = b"\n".join(variant.make(harness, lines))
        if variant.final_newline:
            body += b"\n"
        if variant.gz:
            body = gzip.compress(body, compresslevel=9, mtime=0)
        files[_stream_name(variant)] = body
        exp = json.dumps(expected(harness, variant), indent=2) + "\n"
        files[f"{variant.name}.expected.json"] = exp.encode()
    if harness == "codex":
        files["unanswered-call.session.jsonl"] = _codex_session_cut()
    if harness == "vibe":
        files["unanswered-call.session.jsonl"] = _vibe_session_cut()
    return files


def write_all() -> None:
    for harness in HARNESSES:
        folder = TRANSCRIPTS / harness / "broken"
        folder.mkdir(exist_ok=True)
        for name, content in build(harness).items():
            (folder / name).write_bytes(content)


if __name__ == "__main__":
    write_all()
