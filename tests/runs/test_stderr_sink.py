"""The agent's stderr past its cap: the writer is held until the run's stop has landed."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from tether.runs.stderr_sink import StderrSink

CAP = 1000
FLOOD = 1 << 20  # far more than a pipe holds


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def test_past_the_cap_the_writer_waits_for_the_stop_then_goes_on(tmp_path: Path) -> None:
    read_end, write_end = os.pipe()
    log = tmp_path / "stderr.log"
    with os.fdopen(read_end, "rb", buffering=0) as stream:
        sink = StderrSink(stream, log, CAP)
        writer = threading.Thread(target=_write_all, args=(write_end, b"x" * FLOOD), daemon=True)
        writer.start()
        assert sink.over.wait(10)
        # had the flood been read and thrown away, the writer would be done in milliseconds
        writer.join(0.5)
        assert writer.is_alive(), "the writer went on past the cap before the stop"
        sink.finish(wait=0)  # the stop has landed: the rest is read and thrown away
        writer.join(10)
        assert not writer.is_alive()
        os.close(write_end)
        sink.finish()
    assert log.read_bytes() == b"x" * CAP


def test_under_the_cap_everything_is_kept_and_nothing_waits(tmp_path: Path) -> None:
    read_end, write_end = os.pipe()
    log = tmp_path / "stderr.log"
    with os.fdopen(read_end, "rb", buffering=0) as stream:
        sink = StderrSink(stream, log, CAP)
        _write_all(write_end, b"y" * CAP)
        os.close(write_end)
        sink.finish(wait=10)
    assert not sink.over.is_set()
    assert log.read_bytes() == b"y" * CAP
