"""Writing what the scripted agent prints and records.

Every stdout line goes out in one ``write`` with SIGTERM held back for its
duration, so a stop never leaves half a line behind: the agent either printed a
whole line or nothing of it. Files other processes read (the exec log, the
prompt log, the child pid) are written so that a reader never sees a torn one.
"""

from __future__ import annotations

import json
import os
import signal
import tempfile
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

_HELD = {signal.SIGTERM, signal.SIGINT}
# Exit status when the reader of stdout went away (128 + SIGPIPE), as a CLI
# killed by SIGPIPE would report it.
EXIT_BROKEN_PIPE = 141


def dumps(obj: Mapping[str, Any]) -> str:
    """Compact JSON without ASCII escaping, as the real CLIs print it."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


class LineWriter:
    """Prints JSONL to a file descriptor, one complete line per call."""

    def __init__(self, fd: int = 1) -> None:
        self._fd = fd
        self.lines = 0

    def line(self, obj: Mapping[str, Any]) -> None:
        self.raw((dumps(obj) + "\n").encode())

    def raw(self, data: bytes) -> None:
        old = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD)
        try:
            view = memoryview(data)
            while view:
                written = os.write(self._fd, view)
                view = view[written:]
        except BrokenPipeError:
            os._exit(EXIT_BROKEN_PIPE)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)
        self.lines += 1


class AppendLog:
    """A line log opened in append mode; each line is flushed and fsynced."""

    def __init__(self, path: Path | None) -> None:
        self._fd = (
            os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            if path is not None
            else None
        )

    def write(self, text: str) -> None:
        if self._fd is None:
            return
        os.write(self._fd, (text + "\n").encode())
        os.fsync(self._fd)


class JsonlFile:
    """A JSONL file written as it goes (flushed per line), like a harness's own log."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._fh = path.open("a", encoding="utf-8")

    def line(self, obj: Mapping[str, Any]) -> None:
        self._fh.write(dumps(obj) + "\n")
        self._fh.flush()


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` via a temp file in the same folder, fsync, rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        Path(tmp).replace(path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def user_home(env: Mapping[str, str]) -> Path:
    """``$HOME`` as the agent's environment has it."""
    return Path(env.get("HOME") or Path.home())


def iso_now() -> str:
    """UTC time with milliseconds and a ``Z``: ``2026-11-30T03:33:44.831Z``."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def ms_now() -> int:
    return int(time.time() * 1000)


def new_uuid() -> str:
    """A random (version 4) UUID, without the ``uuid`` module's import cost."""
    b = bytearray(os.urandom(16))
    b[6] = (b[6] & 0x0F) | 0x40
    b[8] = (b[8] & 0x3F) | 0x80
    h = b.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def hex_id(n: int) -> str:
    return os.urandom((n + 1) // 2).hex()[:n]
