"""Looking at processes a test saw start: their command line, and whether they still run."""

from __future__ import annotations

import psutil


def argv(proc: psutil.Process) -> list[str]:
    """The process's command line; empty once it is gone."""
    try:
        return proc.cmdline()
    except psutil.Error:
        return []


def running(proc: psutil.Process) -> bool:
    """Alive and not a zombie."""
    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False
