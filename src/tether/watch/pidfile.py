"""The daemon's pid file: whose it is, and whether that daemon still runs.

A pid file outlives a daemon that was killed with SIGKILL, and its pid may be
reused by an unrelated process; so a pid file only blocks a new daemon while
the process it names is alive and is a ``tether watch`` daemon.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import psutil


def read_pid(path: Path) -> int | None:
    try:
        text = path.read_text("utf-8").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def is_watch_daemon(pid: int) -> bool:
    """``pid`` runs ``tether watch`` (the daemon, not one of its sub-commands)."""
    try:
        proc = psutil.Process(pid)
        if proc.status() == psutil.STATUS_ZOMBIE:
            return False
        argv = proc.cmdline()
    except psutil.Error:
        return False
    for at, arg in enumerate(argv):
        if arg == "watch" and any("tether" in part for part in argv[:at]):
            return not _is_subcommand(argv[at + 1 :])
    return False


def _is_subcommand(args: list[str]) -> bool:
    """The first word after ``watch`` that is not a flag or a flag's value names a sub-command."""
    takes_value = {"--interval", "--idle-threshold", "--wake-min-interval", "--pid-file"}
    skip = False
    for arg in args:
        if skip:
            skip = False
            continue
        if arg in takes_value:
            skip = True
            continue
        if arg.startswith("-"):
            continue
        return True
    return False


def running_daemon(path: Path, me: int | None = None) -> int | None:
    """The pid of the live watch daemon ``path`` names (other than ``me``), else None."""
    pid = read_pid(path)
    if pid is None or pid == me:
        return None
    return pid if is_watch_daemon(pid) else None


def remove_if_mine(path: Path, pid: int) -> None:
    with contextlib.suppress(OSError):
        if read_pid(path) == pid:
            path.unlink()
