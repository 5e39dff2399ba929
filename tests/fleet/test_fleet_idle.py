"""What an executor with nothing to do asks of the database, counted rather than timed.

Every executor of every worker does this all the time, so each round trip
saved here is saved many times over.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import sqlalchemy as sa

from tether.config.schema import FleetSettings
from tether.fleet import launch
from tether.fleet.executor import _Housekeeper
from tether.fleet.fleet_db import FleetStore
from tether.fleet.keeper import Keeper
from tether.fleet.leases import register
from tether.fleet.mirror import Mirror
from tether.fleet.places import Places


def test_dbos_does_not_ping_a_connection_before_each_use() -> None:
    config: Any = launch.dbos_config("postgresql://u@/db", "w1")
    assert config["db_engine_kwargs"]["pool_pre_ping"] is False


def test_dbos_notifier_does_not_wake_a_hundred_times_a_second() -> None:
    config: Any = launch.dbos_config("postgresql://u@/db", "w1")
    assert config["notification_coalesce_sec"] >= 0.5


def test_a_heartbeat_with_nothing_to_do_is_one_transaction(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'fleet.db'}"
    store = FleetStore.open(url)
    try:
        lease = register(store, name="w1", group="w1", host="h", pid=2**22 + 7, seconds=30.0)
        register(store, name="w2", group="w2", host="h", pid=2**22 + 8, seconds=30.0)
        places = Places(url, tmp_path / "s", tmp_path / "w", tmp_path / "l", FleetSettings())
        mirror = Mirror(store, "w1")
        keeper = Keeper(store, lease, seconds=30.0, interval=2.0, homes=mirror.homes, say=print)
        housekeeper = _Housekeeper(store, places, lease, keeper, mirror, print)
        begun: list[object] = []
        sa.event.listen(store.engine, "begin", lambda conn: begun.append(conn))
        housekeeper.beat()
        assert len(begun) == 1
        assert not keeper.fenced.is_set()
    finally:
        store.close()
