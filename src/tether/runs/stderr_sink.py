"""The agent's stderr, kept in ``stderr.log`` up to a cap (``stderr_max_bytes``).

A thread copies the pipe to the file for as long as any process holds its
write end. Past the cap nothing more is written and ``over`` is set: the run
then ends as ``output_limit``, exactly like a flood on stdout. Until that stop
has landed (``finish``) nothing more is read either: the pipe fills and the
writer's next write blocks, so the agent cannot go on past its cap while the
stop is on its way (a flood that was read and thrown away let the agent's
next command run before the stop). After it, the rest is read and thrown
away, so that a process still holding the pipe never blocks on it.
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
        self._stopped = threading.Event()  # the run's stop has landed: read on, throw away
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
                    self._stopped.wait()
                    continue
                out.write(chunk)
                out.flush()
                room -= len(chunk)

    def finish(self, wait: float = 2.0) -> None:
        """After the run's stop: wait briefly for the last bytes (a process still holding
        stderr is not waited for)."""
        self._stopped.set()
        with contextlib.suppress(RuntimeError):
            self._thread.join(wait)
