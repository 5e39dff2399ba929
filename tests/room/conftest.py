"""The room tests' one generated wiki, and the index that their briefs warm.

Most room tests ask about the same deterministic 300-page wiki
(``tests/wikigen.py``), and none of them writes to it. A brief embeds its
candidates with the sentence model, at tens of milliseconds of CPU a passage, and
the index keeps a page's vectors until the page changes. So the run generates
the wiki once and keeps one index of it, in a folder its pytest-xdist workers
share (``tests.across_workers``). A test that only briefs asks that index; a test
that runs tether gets its own TETHER_HOME, starting from a copy of it, and adds to
it what its briefs embedded, for the tests after it. The wiki's files are checked
after every test, so a test that wrote to them would fail instead of changing its
neighbours' wiki.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.across_workers import shared_folder
from tests.room.room_support import SharedWiki
from tests.wikigen import GenWiki


@pytest.fixture(scope="session")
def shared_wiki(tmp_path_factory: pytest.TempPathFactory) -> SharedWiki:
    return SharedWiki(shared_folder(tmp_path_factory, "room-wiki"))


@pytest.fixture
def gen(shared_wiki: SharedWiki, tether_home: Path) -> Iterator[GenWiki]:
    """The shared wiki, with this test's TETHER_HOME holding a copy of its index."""
    shared_wiki.warm(tether_home)
    yield shared_wiki.gen
    shared_wiki.keep(tether_home)
