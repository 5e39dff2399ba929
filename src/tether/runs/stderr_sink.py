"""The agent's stderr, kept in ``stderr.log`` up to a cap (``stderr_max_bytes``).

A thread copies the pipe to the file for as long as any process holds its
write end. Past the cap nothing more is written, the rest is read and thrown
away (a writer must never block on a full pipe), and ``over`` is set: the run
then ends as ``output_limit``, exactly like a flood on stdout.
"""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path
from typing import IO

READ_SIZE = 1 << 16


class StderrSink:
    def __init__(self, stream: IO[bytes], path: Path, cap: int) -> None:
        self._fd = stream.fileno()
        self._path = path
        self._cap = cap
        self.over = threading.Event()
        self._thread = threading.Thread(target=self._copy, daemon=True, name="tether-stderr")
        self._thread.start()

    def _copy(self) -> None:
        with self._path.open("ab") as out:
            room = self._cap - out.tell()
            while True:
                try:
                    chunk = os.read(self._fd, READ_SIZE)
                except OSError:
                    return
                if not chunk:
                    return
                if len(chunk) > room:
                    if room > 0:
                        out.write(chunk[:room])
                        out.flush()
                    room = 0
                    self.over.set()
                    continue
                out.write(chunk)
                out.flush()
                room -= len(chunk)

    def finish(self, wait: float = 2.0) -> None:
        """Wait briefly for the last bytes (a process still holding stderr is not waited for)."""
        with contextlib.suppress(RuntimeError):
            self._thread.join(wait)
