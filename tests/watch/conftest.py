from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.watch.watch_support import TmuxLab


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[TmuxLab]:
    yield from _lab(TmuxLab(tmp_path / "lab"))


@pytest.fixture
def deaf_lab(tmp_path: Path) -> Iterator[TmuxLab]:
    """A lab whose tmux server never hears that a pane's process ended (see TmuxLab)."""
    yield from _lab(TmuxLab(tmp_path / "lab", hears_children=False))


def _lab(lab: TmuxLab) -> Iterator[TmuxLab]:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    lab.root.mkdir(parents=True)
    try:
        yield lab
    finally:
        lab.kill()


@pytest.fixture
def subagents_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "subagents"
    folder.mkdir()
    return folder
