"""What every ``tether watch`` command module needs: the [watch] settings and the store."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any


def watch_settings(
    interval: float | None = None, idle: float | None = None, wake_min: float | None = None
) -> tuple[Any, Path]:
    from tether.config import load_config
    from tether.config.schema import WatchSettings

    config = load_config(
        overrides={
            "watch.interval": interval,
            "watch.idle_threshold": idle,
            "watch.wake_min_interval": wake_min,
        }
    )
    return config.section("watch", WatchSettings), config.home


def open_store(home: Path) -> sqlite3.Connection:
    from tether.store import state_db

    return state_db.connect(home)
