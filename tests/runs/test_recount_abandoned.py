"""An abandoned Codex run is recounted from what it left, never as zero iterations."""

from __future__ import annotations

import shutil
from pathlib import Path

from tether.runs.recovery import recount
from tether.store.runs import RunRow

TRANSCRIPTS = Path(__file__).resolve().parents[1] / "transcripts" / "codex"
THREAD = "01a22a83-b3d6-7b51-a103-a8ea0ce69498"


def _row(run_dir: Path) -> RunRow:
    return RunRow(
        id="r-20261201-000000-abcdef",
        profile="codex",
        harness="codex",
        argv=["codex", "exec", "--json"],
        started_at="2026-12-01T00:00:00+00:00",
        run_dir=str(run_dir),
    )


def test_with_its_rollout_the_steps_come_from_the_rollout(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    shutil.copy(TRANSCRIPTS / "forever.jsonl", run_dir / "events.jsonl")
    codex_home = tmp_path / "codex"
    rollout = codex_home / "sessions" / "2026" / "12" / "01" / f"rollout-x-{THREAD}.jsonl"
    rollout.parent.mkdir(parents=True)
    shutil.copy(TRANSCRIPTS / "forever.session.jsonl", rollout)
    ledger = recount(_row(run_dir), env={"CODEX_HOME": str(codex_home)})
    assert ledger.iteration_source == "session_file"
    assert ledger.iterations == 61  # the transcript's own count (forever.expected.json)
    assert ledger.tool_calls > 0


def test_without_its_rollout_the_stream_bound_stands_in(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    shutil.copy(TRANSCRIPTS / "forever.jsonl", run_dir / "events.jsonl")
    ledger = recount(_row(run_dir), env={"CODEX_HOME": str(tmp_path / "none")})
    assert ledger.iteration_source == "bound"
    assert ledger.iterations >= ledger.tool_calls > 0
