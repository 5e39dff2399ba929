"""Running a configured or ticket-given command: argv only, bounded, with evidence.

Never a shell: the argv is passed to ``exec`` as it is, so ``;``, ``&&``,
``$(...)`` or ``|`` in it are plain argument text. The command runs in its own
process group; at its timeout the whole group is killed and the result says
so. A missing executable is a result too (``missing``), never an exception.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

TAIL_CHARS = 600


@dataclass(frozen=True)
class CommandResult:
    argv: tuple[str, ...]
    exit_code: int | None  # None: it did not exit by itself (timeout) or never started
    stdout: str
    tail: str  # the last characters of stdout + stderr
    seconds: float
    timed_out: bool = False
    missing: bool = False  # the executable was not found

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out and not self.missing

    def summary(self) -> str:
        command = shlex.join(self.argv)
        if self.missing:
            return f"`{command}`: executable {self.argv[0]!r} not found"
        if self.timed_out:
            return f"`{command}`: killed after {self.seconds:.1f}s (timeout)"
        return f"`{command}`: exit {self.exit_code}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "command": list(self.argv),
            "exit_code": self.exit_code,
            "timed_out": self.timed_out,
            "missing": self.missing,
            "seconds": round(self.seconds, 3),
            "output_tail": self.tail,
        }


def find_executable(argv0: str, cwd: Path, env: Mapping[str, str]) -> str | None:
    """The executable ``argv0`` names: a path (relative to ``cwd``) or a name on ``PATH``."""
    if os.sep in argv0:
        candidate = Path(argv0) if Path(argv0).is_absolute() else cwd / argv0
        return str(candidate) if os.access(candidate, os.X_OK) and candidate.is_file() else None
    return shutil.which(argv0, path=env.get("PATH", os.defpath))


def run_command(
    argv: Sequence[str],
    *,
    cwd: Path,
    timeout: float,
    env: Mapping[str, str] | None = None,
    stdin: bytes | None = None,
) -> CommandResult:
    """Run ``argv`` without a shell, at most ``timeout`` seconds (then the group is killed)."""
    environ = dict(os.environ if env is None else env)
    command = tuple(argv)
    started = time.monotonic()
    executable = find_executable(command[0], cwd, environ) if command else None
    if executable is None:
        return CommandResult(command, None, "", "", 0.0, missing=True)
    try:
        proc = subprocess.Popen(
            [executable, *command[1:]],
            cwd=cwd,
            env=environ,
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        return CommandResult(command, None, "", str(exc), time.monotonic() - started, missing=True)
    timed_out = False
    try:
        out, err = proc.communicate(stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_group(proc)
        try:
            out, err = proc.communicate(timeout=5)
        except subprocess.TimeoutExpired:  # a grandchild left the group and holds the pipes
            for pipe in (proc.stdout, proc.stderr, proc.stdin):
                if pipe is not None:
                    pipe.close()
            proc.wait()
            out, err = b"", b""
    seconds = time.monotonic() - started
    stdout = out.decode("utf-8", "replace")
    combined = (stdout + err.decode("utf-8", "replace")).strip()
    return CommandResult(
        command,
        None if timed_out else proc.returncode,
        stdout,
        combined[-TAIL_CHARS:],
        seconds,
        timed_out=timed_out,
    )


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        proc.kill()
