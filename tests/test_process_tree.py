"""The kernel's record of how an ended, unreaped child ended (``unreaped_end``)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from functools import partial

import pytest
from tests.watch.watch_support import wait_until

from tether.core.process_tree import has_proc, unreaped_end


def _is_zombie(pid: int) -> bool:
    with open(f"/proc/{pid}/stat", "rb") as handle:
        stat = handle.read()
    return stat[stat.rfind(b")") + 2 :].split()[0] == b"Z"


@pytest.fixture
def children() -> Iterator[list[subprocess.Popen[bytes]]]:
    if not has_proc():
        pytest.fail("these tests read Linux's /proc")
    made: list[subprocess.Popen[bytes]] = []
    yield made
    for child in made:
        child.kill()
        child.wait()


def _child(children: list[subprocess.Popen[bytes]], code: str) -> subprocess.Popen[bytes]:
    child = subprocess.Popen([sys.executable, "-c", code])
    children.append(child)
    return child


def test_an_unreaped_child_says_how_it_ended_until_it_is_reaped(
    children: list[subprocess.Popen[bytes]],
) -> None:
    done = _child(children, "raise SystemExit(3)")
    killed = _child(children, "import time; time.sleep(60)")
    assert unreaped_end(killed.pid, os.getpid()) is None  # it runs: nothing to say yet
    os.kill(killed.pid, signal.SIGKILL)
    for child in (done, killed):  # ended, not reaped (no wait yet): a zombie
        wait_until(partial(_is_zombie, child.pid), what=f"{child.pid} a zombie")
    assert unreaped_end(done.pid, os.getpid()) == (3, None)
    assert unreaped_end(killed.pid, os.getpid()) == (None, signal.SIGKILL)
    assert unreaped_end(done.pid, os.getppid()) is None  # only its own parent's child
    assert done.wait() == 3
    assert unreaped_end(done.pid, os.getpid()) is None  # reaped: the record is gone


def test_an_exit_0_is_told_as_such(children: list[subprocess.Popen[bytes]]) -> None:
    quiet = _child(children, "pass")
    wait_until(partial(_is_zombie, quiet.pid), what="the child a zombie")
    assert unreaped_end(quiet.pid, os.getpid()) == (0, None)
