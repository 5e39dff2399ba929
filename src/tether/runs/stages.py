"""Post-run stages (check commit, reviewer, push ...): only after a completed run."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

STAGE_TIMEOUT_SECONDS = 600.0


def run_post_stages(stages: Sequence[Sequence[str]], cwd: Path) -> list[dict[str, Any]]:
    """Run each stage in order (argv, no shell); stop at the first that fails."""
    results: list[dict[str, Any]] = []
    failed = False
    for argv in stages:
        if failed:
            results.append(
                {"command": list(argv), "status": "skipped", "reason": "an earlier stage failed"}
            )
            continue
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
        failed = code != 0
        results.append(
            {
                "command": list(argv),
                "status": "ok" if not failed else "failed",
                "exit_code": code,
                "seconds": round(time.monotonic() - t0, 3),
                "output_tail": tail,
            }
        )
    return results
