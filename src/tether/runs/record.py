"""Where a run keeps its files, how its id is made, and its record (``run.json``).

Readers of runs (``tether runs``, ``tether status``) import this module, not the
ones that finish a run: it stays small.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tether.gate.runstop import REFUSED_FILE

if TYPE_CHECKING:
    from tether.events.accounting import Ledger
    from tether.store.runs import RunRow


def new_run_id(now: datetime | None = None) -> str:
    """Time-sortable, unique: ``r-20261130-041502-3fa9c1``."""
    now = now or datetime.now(UTC)
    # os.urandom(n).hex() is what secrets.token_hex(n) returns, without loading secrets
    return f"r-{now:%Y%m%d-%H%M%S}-{os.urandom(3).hex()}"


@dataclass(frozen=True)
class RunPaths:
    root: Path

    @classmethod
    def for_run(cls, home: Path, run_id: str) -> RunPaths:
        return cls(home / "runs" / run_id)

    @property
    def events(self) -> Path:
        return self.root / "events.jsonl"

    @property
    def stderr(self) -> Path:
        return self.root / "stderr.log"

    @property
    def worktree_start(self) -> Path:
        """The work tree as the run found it (``worktree.save``), for a recovery."""
        return self.root / "worktree-start.json"

    @property
    def prompt(self) -> Path:
        return self.root / "prompt.md"

    @property
    def report_json(self) -> Path:
        return self.root / "report.json"

    @property
    def report_md(self) -> Path:
        return self.root / "report.md"

    @property
    def settings(self) -> Path:
        return self.root / "settings.json"

    @property
    def record(self) -> Path:
        return self.root / "run.json"

    @property
    def refused(self) -> Path:
        """The first tool call the gate refused in this run (written by the gate)."""
        return self.root / REFUSED_FILE

    @property
    def stages(self) -> Path:
        return self.root / "stages.json"

    @property
    def outbox(self) -> Path:
        """The run's outbox folder (``TETHER_OUTBOX_DIR``): the one place a proposal is written;
        the supervisor collects it into ``tether.db`` when the run ends."""
        return self.root / "outbox"


def row_to_record(row: RunRow, ledger: Ledger | None = None) -> dict[str, Any]:
    """A run's record as ``run.json`` keeps it and ``tether runs --json`` prints it."""
    record = asdict(row)
    if ledger is not None:
        record["ledger"] = ledger.to_dict()
    plain: dict[str, Any] = json.loads(json.dumps(record, default=str))
    return plain
