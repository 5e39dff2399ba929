"""Routine checks: configured maintenance commands, due once their cooldown has passed.

A routine is not due while its lock file exists (someone holds it); while it
runs, tether holds that lock file itself (created exclusively, removed after).
A routine that fails leaves an INBOX note with its output, so the failure
becomes work that triage turns into a ticket.
"""

from __future__ import annotations

import contextlib
import os
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tether.board import State
from tether.config.loop import RoutineCheck, parse_duration
from tether.core.errors import TetherError
from tether.fs import atomic_write_text, resolve_inside
from tether.loop import tick_memory

if TYPE_CHECKING:
    from tether.loop.commands import CommandResult
    from tether.loop.context import Loop

PREFIX = "routine:"


@dataclass(frozen=True)
class RoutineStatus:
    routine: RoutineCheck
    due: bool
    why: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.routine.name,
            "command": list(self.routine.command),
            "due": self.due,
            "why": self.why,
        }


def _lock_path(loop: Loop, routine: RoutineCheck) -> Path | None:
    if routine.lock is None:
        return None
    return resolve_inside(loop.project_root, routine.lock)


def status(loop: Loop, routine: RoutineCheck) -> RoutineStatus:
    try:
        lock = _lock_path(loop, routine)
    except TetherError as exc:
        return RoutineStatus(routine, False, f"lock path refused: {exc}")
    if lock is not None and lock.exists():
        return RoutineStatus(routine, False, f"locked ({routine.lock} exists)")
    last = tick_memory.routine_record(loop.conn, loop.scope, routine.name)
    if last is None:
        return RoutineStatus(routine, True, "never ran")
    cooldown = parse_duration(routine.cooldown)
    age = (loop.clock.now() - last.last_run).total_seconds()
    if age < cooldown:
        return RoutineStatus(routine, False, f"ran {age:.0f}s ago (cooldown {routine.cooldown})")
    return RoutineStatus(routine, True, f"cooldown {routine.cooldown} passed")


def due_routine(loop: Loop) -> tuple[RoutineCheck | None, list[RoutineStatus]]:
    statuses: list[RoutineStatus] = []
    for routine in loop.settings.routines:
        current = status(loop, routine)
        statuses.append(current)
        if current.due:
            return routine, statuses
    return None, statuses


def run_routine(loop: Loop, routine: RoutineCheck) -> tuple[CommandResult | None, str]:
    """Run a due routine under its lock; record it; a failure becomes an INBOX note."""
    # imported here: running a command loads subprocess; most ticks run none
    from tether.loop.commands import run_command

    lock = _lock_path(loop, routine)
    fd: int | None = None
    if lock is not None:
        try:
            lock.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            return None, f"routine {routine.name}: locked ({routine.lock} exists), skipped"
    try:
        timeout = parse_duration(routine.timeout or loop.settings.check_timeout)
        result = run_command(routine.command, cwd=loop.project_root, timeout=timeout, env=loop.env)
    finally:
        if fd is not None and lock is not None:
            os.close(fd)
            with contextlib.suppress(FileNotFoundError):
                lock.unlink()
    now = loop.clock.now()
    tick_memory.record_routine(
        loop.conn, loop.scope, routine.name, now, result.exit_code, result.tail
    )
    if result.ok:
        return result, f"routine {routine.name}: {result.summary()}"
    note = loop.board.folder(State.INBOX) / f"routine-{routine.name}-{now:%Y%m%d-%H%M%S}.md"
    atomic_write_text(
        note,
        f"Routine check {routine.name} failed\n\n"
        f"`{shlex.join(routine.command)}` — {result.summary()}\n\n"
        f"```\n{result.tail}\n```\n\n{loop.session_line()}\n",
    )
    return result, f"routine {routine.name}: {result.summary()}; wrote INBOX/{note.name}"
