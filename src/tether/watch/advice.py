"""Settings that work but probably do not do what was meant: said once, never fatal.

The watchdog runs with them (a subagents folder may be created later, a log
file may appear once the orchestrator starts writing), but the person who
configured them should hear about it when the daemon starts, not find out
after a missed wake.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from tether.config.schema import WatchSettings
from tether.watch.registry import Orchestrator


def setting_warnings(settings: WatchSettings) -> list[str]:
    """What looks wrong in ``[watch]``, one sentence each."""
    found = [
        f"subagents folder {folder} does not exist; no pane is found there until it does."
        for folder in missing(settings.subagents_folders)
    ]
    if settings.idle_threshold < settings.interval:
        found.append(
            f"idle_threshold ({settings.idle_threshold:g} s) is below interval "
            f"({settings.interval:g} s): an orchestrator that checks on its subagents once "
            f"per interval can be woken between two checks; keep the threshold above it."
        )
    return found


def log_warning(path: Path) -> str | None:
    """A warning when an orchestrator's ``--log`` file is not there (yet)."""
    if path.exists():
        return None
    return (
        f"--log {path} does not exist (yet); until it does, its growth cannot count as "
        f"the orchestrator's activity."
    )


def orchestrator_warnings(orchestrators: Iterable[Orchestrator]) -> list[str]:
    """Registered orchestrators whose ``--log`` file is not there."""
    found = []
    for orch in orchestrators:
        if orch.log_path and orch.run_id is None:
            warning = log_warning(Path(orch.log_path))
            if warning is not None:
                found.append(f"orchestrator {orch.name}: {warning}")
    return found


def missing(folders: Iterable[str]) -> list[str]:
    return [folder for folder in folders if not Path(folder).expanduser().is_dir()]
