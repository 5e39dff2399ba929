"""Why a run failed, in the harness's own words: its error event, else its stderr.

A harness that fails often says why only on stderr (Vibe without its API key:
"Missing MISTRAL_API_KEY"), which the supervisor keeps in ``stderr.log``. The
last lines of it go into the report, and one line — the harness's error
message, else the last stderr line that reads like an error, else the last
line — into the report's ``stopped`` line, the run's ``stop_reason`` and every
summary that names the stop.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tether.events.accounting import Ledger

TAIL_LINES = 12
_TAIL_BYTES = 16384
_LINE_CHARS = 300
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")
_ERRORISH = re.compile(
    r"error|missing|fail|denied|not found|invalid|unauthori[sz]ed|forbidden|refused|"
    r"exception|traceback|no such|cannot|can't|unable",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Failure:
    """The reason of a failed run and the end of the harness's stderr."""

    reason: str | None
    exit_status: int | None
    stderr_tail: list[str] = field(default_factory=list)
    stderr: str | None = None  # the file the tail is from

    def as_dict(self) -> dict[str, Any]:
        return {
            "reason": self.reason,
            "exit_status": self.exit_status,
            "stderr_tail": self.stderr_tail,
            "stderr": self.stderr,
        }

    def words(self) -> str:
        """``: <reason> (exit N)``, to follow the stop's own words."""
        why = f": {self.reason}" if self.reason else ""
        code = f" (exit {self.exit_status})" if self.exit_status not in (None, 0) else ""
        return f"{why}{code}"


def stderr_tail(path: Path, lines: int = TAIL_LINES) -> list[str]:
    """The last non-blank lines of ``path`` (escape sequences removed, each cut short)."""
    try:
        with path.open("rb") as handle:
            size = handle.seek(0, 2)
            handle.seek(max(0, size - _TAIL_BYTES))
            raw = handle.read()
    except OSError:
        return []
    text = _ANSI.sub("", raw.decode("utf-8", "replace")).replace("\r", "\n")
    kept = [line.rstrip() for line in text.splitlines() if line.strip()]
    return [line[:_LINE_CHARS] for line in kept[-lines:]]


def failure_of(ledger: Ledger, exit_status: int | None, stderr: Path) -> Failure:
    """Why the run failed: the harness's error event, else its stderr."""
    tail = stderr_tail(stderr)
    reason: str | None = None
    if ledger.final_status == "failure" and ledger.final_message:
        reason = ledger.final_message.strip().splitlines()[0][:_LINE_CHARS]
    if reason is None:
        reason = next((line.strip() for line in reversed(tail) if _ERRORISH.search(line)), None)
    if reason is None and tail:
        reason = tail[-1].strip()
    return Failure(reason, exit_status, tail, str(stderr) if tail else None)
