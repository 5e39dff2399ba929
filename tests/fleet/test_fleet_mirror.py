"""The runs' mirror into the fleet's database: best effort, pass after pass, never fatal."""

from __future__ import annotations

from pathlib import Path

from tether.fleet.fleet_db import FleetStore
from tether.fleet.mirror import Mirror


def test_a_home_whose_database_cannot_be_opened_waits_for_the_next_pass(tmp_path: Path) -> None:
    """The mirror runs on the executor's main thread: an error out of it ends the worker."""
    store = FleetStore.open(f"sqlite:///{tmp_path / 'fleet.db'}")
    try:
        home = tmp_path / "home"
        home.mkdir()
        (home / "tether.db").write_bytes(b"not a database, as a file caught half written" * 40)
        mirror = Mirror(store, "w1")
        mirror.watch("p", home)
        mirror.sync()
    finally:
        store.close()
