"""A folder the pytest-xdist workers of one run share, and its lock.

Some fixtures cost seconds of CPU to build and are only read afterwards (an
index whose pages the sentence model embedded, a generated wiki). Built once
per worker, the suite pays for them once per worker; built in a shared folder
under a lock (the pattern pytest-xdist documents), once per run. Without
pytest-xdist the folder is the process's own: a run never sees another run's.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tether.fs import flocked


def shared_folder(factory: pytest.TempPathFactory, name: str) -> Path:
    """The folder ``name`` that every worker of this run gets (made if it is not there)."""
    base = factory.getbasetemp()
    # a worker's base is <run>/popen-gwN: its parent is the run's, shared by its workers
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    folder = root / name
    folder.mkdir(exist_ok=True)
    return folder


@contextmanager
def held(folder: Path) -> Iterator[None]:
    """The folder's lock, held across the workers for the block."""
    with open(folder / ".lock", "a+b") as file, flocked(file):
        yield
