"""One entry of the ingest queue: its folder and manifest, the stops, the folder names.

An entry is a folder holding ``manifest.json`` (``tether.ingest.manifest``)
and the collected file or folder under its name; a claimed entry also holds
``claim.json`` (who took it, when).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tether.core.errors import TetherError
from tether.core.exit_codes import ExitCode
from tether.ingest.manifest import Manifest

CLAIMED = ".claimed"  # incoming/.claimed/<id>/: taken by one run
DONE = ".done"  # incoming/.done/<id>/: ended
CLAIM_FILE = "claim.json"


class HumanStopError(TetherError):
    """A name collision (or another hold) that only the human resolves; nothing was overwritten."""

    exit_code = ExitCode.HUMAN_STOP


class IngestRefusedError(TetherError):
    """A human-only action attempted from inside an agent's process tree."""

    exit_code = ExitCode.GATE_REFUSED


@dataclass(frozen=True)
class ClaimRecord:
    """``claim.json`` of a claimed entry: who took it, when; ``fields`` as on disk.

    A missing or unreadable file reads as an empty record (every field None).
    """

    fields: Mapping[str, Any]
    owner: str | None
    claimed_at: str | None
    pid: int | None
    host: str | None

    @classmethod
    def parse(cls, data: Mapping[str, Any]) -> ClaimRecord:
        owner, claimed_at, pid, host = (data.get(k) for k in ("owner", "claimed_at", "pid", "host"))
        return cls(
            fields=dict(data),
            owner=owner if isinstance(owner, str) else None,
            claimed_at=claimed_at if isinstance(claimed_at, str) else None,
            pid=pid if isinstance(pid, int) and not isinstance(pid, bool) else None,
            host=host if isinstance(host, str) else None,
        )

    def as_dict(self) -> dict[str, Any]:
        """The record as ``claim.json`` holds it, every key in its order."""
        return dict(self.fields)


@dataclass(frozen=True)
class Entry:
    id: str
    folder: Path
    manifest: Manifest

    @property
    def kind(self) -> str:
        return self.manifest.kind

    @property
    def name(self) -> str:
        return self.id if self.manifest.name is None else self.manifest.name

    @property
    def payload(self) -> Path:
        return self.folder / self.name

    def claim(self) -> ClaimRecord:
        try:
            data = json.loads((self.folder / CLAIM_FILE).read_text("utf-8"))
        except (OSError, ValueError):
            data = {}
        return ClaimRecord.parse(data if isinstance(data, dict) else {})


def now_stamp() -> str:
    """The time as the manifests write it: UTC ISO to the microsecond."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
