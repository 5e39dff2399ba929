"""One entry of the ingest queue: its folder and manifest, the stops, the folder names.

An entry is a folder holding ``manifest.json`` (``tether.ingest.manifest``)
and the collected file or folder under its name; a claimed entry also holds
``claim.json`` (who took it, when).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tether.errors import TetherError
from tether.exit_codes import ExitCode
from tether.ingest.manifest import SOURCE

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
class Entry:
    id: str
    folder: Path
    manifest: dict[str, Any]

    @property
    def kind(self) -> str:
        return str(self.manifest.get("kind", SOURCE))

    @property
    def name(self) -> str:
        return str(self.manifest.get("name", self.id))

    @property
    def payload(self) -> Path:
        return self.folder / self.name

    def claim(self) -> dict[str, Any]:
        try:
            data: dict[str, Any] = json.loads((self.folder / CLAIM_FILE).read_text("utf-8"))
        except (OSError, ValueError):
            return {}
        return data


def now_stamp() -> str:
    """The time as the manifests write it: UTC ISO to the microsecond."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def fsync_dir(folder: Path) -> None:
    """Make a rename in ``folder`` durable."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
