"""`ingest next` and `ingest end` load the queue, not the wiki index (speed: bench/cli_start.py).

An agent runs both once per entry, each a fresh process. Neither reads the search
index, and their temp names come from os.urandom, so neither the index (SQLite
schema, page parser, freshness) nor secrets is loaded.
"""

from __future__ import annotations

import os
from pathlib import Path

from tests.outside_agents import without_agent_vars
from tests.support.loaded import tether_loaded

from tether.ingest.queue import Queue
from tether.wiki.layout import Wiki

NOT_NEEDED = ("tether.wiki.index", "tether.wiki.index_store", "tether.wiki.page", "secrets")


def test_next_and_end_load_no_index(tmp_path: Path, tether_home: Path) -> None:
    kb = tmp_path / "kb"
    (kb / "wiki").mkdir(parents=True)
    source = tmp_path / "source.md"
    source.write_text("# Source\n\nContent.\n", encoding="utf-8")
    queue = Queue(Wiki.open(kb))
    queue.collect(source)
    queue.release([e.id for e in queue.quarantined()])
    env = {**without_agent_vars(os.environ, "TETHER_DEPTH"), "TETHER_SESSION_ID": "lean"}
    out, loaded = tether_loaded(kb, "ingest", "next", env=env)
    assert "source.md" in out
    extra = loaded & set(NOT_NEEDED)
    assert not extra
    _, loaded = tether_loaded(kb, "ingest", "end", env=env)
    extra = loaded & set(NOT_NEEDED)
    assert not extra
