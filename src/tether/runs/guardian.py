"""The guardian: takes an agent's process group down when its supervisor dies.

Started by ``tether.runs.process.spawn_agent`` as ``python -m tether.runs.guardian
FD PGID GRACE``. It reads the pipe ``FD`` whose write end only the supervisor
holds. ``done`` on the pipe means the run ended normally: it exits without
acting. End of file without ``done`` means the supervisor is gone (even by
SIGKILL): SIGTERM to the group, SIGKILL after ``GRACE`` seconds.
"""

from __future__ import annotations

import os
import signal
import sys
import time


def group_running(pgid: int) -> bool:
    """Whether any non-zombie process is in process group ``pgid``.

    A zombie runs nothing; where PID 1 does not reap orphans (some containers),
    killed grandchildren stay zombies for good, so ``killpg(pgid, 0)`` alone would
    report the group alive forever.
    """
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    import psutil  # only when the group exists: ``tether status`` asks about dead ones

    for pid in psutil.pids():
        try:
            if os.getpgid(pid) == pgid and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                return True
        except (OSError, psutil.Error):
            continue
    return False


def _wait_for_end(fd: int) -> bytes:
    data = b""
    while True:
        try:
            chunk = os.read(fd, 64)
        except InterruptedError:
            continue
        if not chunk:
            return data
        data += chunk


def guard(fd: int, pgid: int, grace: float) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if b"done" in _wait_for_end(fd) or not group_running(pgid):
        return
    try:
        os.killpg(pgid, signal.SIGTERM)
    except ProcessLookupError:
        return
    end = time.monotonic() + grace
    while time.monotonic() < end and group_running(pgid):
        time.sleep(0.02)
    if group_running(pgid):
        try:  # noqa: SIM105 - contextlib costs an import in every run's guardian
            os.killpg(pgid, signal.SIGKILL)
        except ProcessLookupError:
            pass


if __name__ == "__main__":
    guard(int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]))
