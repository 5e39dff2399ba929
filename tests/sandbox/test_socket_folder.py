"""A sandbox's socket folder left behind by a killed supervisor is removed at the next start.

Real processes make their folders the way ``Sandbox`` does; one is killed with
SIGKILL (so nothing of it runs ``close``), one lives on. The next folder made
removes the killed one's only: a live owner's, a reused pid's owner that started
later, another pid namespace's, another user's and old-style names are left.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tether.core.process_tree import has_proc, read_proc
from tether.sandbox import socket_folder

pytestmark = pytest.mark.skipif(not has_proc(), reason="owners are read from /proc")

MAKER = (
    "import sys; from tether.sandbox import socket_folder; "
    "print(socket_folder.make(sys.argv[1]), flush=True); sys.stdin.read()"
)


@pytest.fixture
def parent() -> Iterator[Path]:
    # short, as the system's temp folder is: the owner goes into names that fit
    where = Path(tempfile.mkdtemp(prefix="sf-", dir="/tmp"))
    yield where
    shutil.rmtree(where, ignore_errors=True)


def _supervisor(parent: Path) -> tuple[subprocess.Popen[str], Path]:
    """A process that made its socket folder and lives until its stdin closes."""
    proc = subprocess.Popen(
        [sys.executable, "-c", MAKER, str(parent)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    folder = Path(proc.stdout.readline().strip())
    assert folder.is_dir() and folder.parent == parent, folder
    return proc, folder


def test_the_folder_of_a_killed_supervisor_is_removed_at_the_next_start(parent: Path) -> None:
    killed, killed_folder = _supervisor(parent)
    live, live_folder = _supervisor(parent)
    try:
        (killed_folder / "proxy.sock").write_text("")  # what a run leaves in it
        killed.send_signal(signal.SIGKILL)
        killed.communicate()
        assert killed_folder.is_dir()  # nothing of the killed one removed it
        space, pid, ticks = _owner(live_folder)
        me = read_proc(os.getpid())
        assert me is not None
        # this process's pid, but an owner that started earlier: the pid was reused
        reused = parent / f"tether-sbx-{space}-{me.pid}-{me.start_ticks - 1}-abcdefgh"
        # a dead pid of another pid namespace: its pids mean nothing here
        foreign = parent / f"tether-sbx-{space + 1}-{killed.pid}-{ticks}-abcdefgh"
        old_style = parent / "tether-sbx-abcdefgh"  # no owner to ask
        for folder in (reused, foreign, old_style):
            folder.mkdir()
        made = socket_folder.make(str(parent))
        assert not killed_folder.exists()
        assert not reused.exists()
        assert live_folder.is_dir() and foreign.is_dir() and old_style.is_dir()
        assert made.is_dir() and _owner(made)[1:] == (me.pid, me.start_ticks)
        assert pid == live.pid
    finally:
        live.communicate("")
    # the live one's folder outlives it only until the next start
    assert live_folder.is_dir()
    assert socket_folder.reclaim(str(parent)) == [live_folder]


def _owner(folder: Path) -> tuple[int, int, int]:
    owner = socket_folder.owner_of(folder.name)
    assert owner is not None, folder
    return owner


def test_a_long_temp_folder_gets_names_without_an_owner(tmp_path: Path) -> None:
    # a Unix socket path has at most 107 bytes: the owner stays out of a name too long
    deep = tmp_path / ("d" * (100 - len(str(tmp_path))))
    deep.mkdir()
    made = socket_folder.make(str(deep))
    assert socket_folder.owner_of(made.name) is None
    assert made.name.startswith(socket_folder.PREFIX)
