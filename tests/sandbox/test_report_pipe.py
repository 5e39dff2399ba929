"""A sandbox closes each end of its report pipe once, and never a descriptor it no longer owns.

A fleet executor runs a unit's sandbox while its other threads open database
connections and SQLite files: a number the sandbox closed is handed to the
next thing any thread opens. A second ``os.close`` of that number closed a
database connection's socket under psycopg ("Socket operation on
non-socket") and a SQLite file under a tick ("disk I/O error").
"""

from __future__ import annotations

import os
from pathlib import Path

from tether.sandbox.backend import backend_for_this_machine
from tether.sandbox.runtime import Sandbox
from tether.sandbox.spec import SandboxSpec


def test_close_after_started_leaves_a_reused_descriptor_number_open(tmp_path: Path) -> None:
    sandbox = Sandbox(backend_for_this_machine(), SandboxSpec(cwd=tmp_path), ())
    (write_end,) = sandbox.pass_fds
    sandbox.started()
    # another thread opens a file, and gets the number the sandbox just gave back
    other = os.open(tmp_path / "another-threads-file", os.O_CREAT | os.O_RDWR, 0o600)
    if other != write_end:  # a lower number was free: put the file at the sandbox's old one
        os.dup2(other, write_end)
        os.close(other)
    try:
        sandbox.close()
        os.fstat(write_end)  # EBADF if close() closed the number a second time
        os.write(write_end, b"still mine")
        assert (tmp_path / "another-threads-file").read_bytes() == b"still mine"
    finally:
        os.close(write_end)


def test_a_second_close_closes_nothing(tmp_path: Path) -> None:
    sandbox = Sandbox(backend_for_this_machine(), SandboxSpec(cwd=tmp_path), ())
    sandbox.started()
    first = sandbox.close()
    opened = [os.open(os.devnull, os.O_RDONLY) for _ in range(4)]  # the lowest free numbers
    try:
        second = sandbox.close()
        for fd in opened:
            os.fstat(fd)
        assert first.status is None and second.status is None
    finally:
        for fd in opened:
            os.close(fd)
