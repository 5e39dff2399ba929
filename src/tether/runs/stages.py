"""Post-run stages (check commit, reviewer, push ...): only after a completed run."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

STAGE_TIMEOUT_SECONDS = 600.0
SKIPPED_REASON = "an earlier stage failed"


@dataclass(frozen=True)
class StageResult:
    """How one post-run stage went; ``stages.json`` holds one ``as_dict`` each."""

    command: tuple[str, ...]
    status: str  # ok, failed, skipped
    exit_code: int | None = None  # None: not started, timed out or skipped
    seconds: float | None = None  # None: skipped
    output_tail: str = ""  # the end of its stdout and stderr

    @property
    def failed(self) -> bool:
        return self.status == "failed"

    def as_dict(self) -> dict[str, Any]:
        if self.status == "skipped":
            return {"command": list(self.command), "status": self.status, "reason": SKIPPED_REASON}
        return {
            "command": list(self.command),
            "status": self.status,
            "exit_code": self.exit_code,
            "seconds": self.seconds,
            "output_tail": self.output_tail,
        }

    def end(self) -> StageEnd:
        """What the run's record keeps of it."""
        return StageEnd(self.command, self.status, self.exit_code)


@dataclass(frozen=True)
class StageEnd:
    """How one post-run stage ended, as the run's record keeps it (``runs.stages``)."""

    command: tuple[str, ...]
    status: str  # ok, failed, skipped
    exit_code: int | None

    @classmethod
    def parse(cls, data: dict[str, Any]) -> StageEnd:
        code = data.get("exit_code")
        return cls(
            tuple(str(a) for a in data.get("command") or ()),
            str(data.get("status")),
            code if isinstance(code, int) else None,
        )

    def as_dict(self) -> dict[str, Any]:
        return {"command": list(self.command), "status": self.status, "exit_code": self.exit_code}


def run_post_stages(stages: Sequence[Sequence[str]], cwd: Path) -> list[StageResult]:
    """Run each stage in order (argv, no shell); stop at the first that fails."""
    results: list[StageResult] = []
    for argv in stages:
        if results and results[-1].status in ("failed", "skipped"):
            results.append(StageResult(tuple(argv), "skipped"))
        else:
            results.append(_run_stage(argv, cwd))
    return results


def _run_stage(argv: Sequence[str], cwd: Path) -> StageResult:
    # imported here: the loop reads a run's stage results at every tick and runs none
    import subprocess

    t0 = time.monotonic()
    try:
        done = subprocess.run(
            list(argv),
            cwd=cwd,
            capture_output=True,
            timeout=STAGE_TIMEOUT_SECONDS,
            check=False,
        )
        code: int | None = done.returncode
        tail = (done.stdout + done.stderr).decode("utf-8", "replace")[-2000:]
    except (OSError, subprocess.TimeoutExpired) as exc:
        code, tail = None, str(exc)
    status = "ok" if code == 0 else "failed"
    return StageResult(tuple(argv), status, code, round(time.monotonic() - t0, 3), tail)
