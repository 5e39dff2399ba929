"""Agent processes: their own process group, a guardian, and a hard stop.

The agent runs as leader of a new process group so one signal reaches every
process it started. A small guardian process (``tether.runs.guardian``) holds the read end of a
pipe whose write end only the supervisor has: if the supervisor dies (even by SIGKILL) the
pipe closes and the guardian takes the whole group down, so no agent outlives
the supervisor that was meant to bound it.

psutil is imported only to stop a sandboxed agent (finding the sandbox's launcher
and what still runs inside): most agents end by themselves, and every run pays
its supervisor's imports.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Protocol

from tether.core.errors import HarnessNotFoundError
from tether.runs.guardian import group_running

if TYPE_CHECKING:
    import psutil

_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """In the child, before exec: SIGKILL me when the supervisor thread's process dies."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


# for other process trees that must not outlive their parent (a fleet worker's executors)
die_with_parent = _die_with_parent


@dataclass
class AgentProcess:
    popen: subprocess.Popen[bytes]
    pgid: int
    guardian: subprocess.Popen[bytes] | None
    _guardian_fd: int | None
    # the agent runs inside a sandbox: ``popen`` is the sandbox, the agent is the
    # child of its launcher (``tether.sandbox.launcher``)
    sandboxed: bool = False
    # processes other than the agent that were still alive when the stop had to kill
    killed_at_stop: tuple[tuple[int, tuple[str, ...]], ...] = ()

    @property
    def pid(self) -> int:
        return self.popen.pid

    @property
    def stdout(self) -> IO[bytes]:
        assert self.popen.stdout is not None
        return self.popen.stdout

    @property
    def stderr(self) -> IO[bytes]:
        assert self.popen.stderr is not None
        return self.popen.stderr

    def group_alive(self) -> bool:
        """True while any process of the agent's group still runs (zombies do not count)."""
        self.popen.poll()
        return group_running(self.pgid)

    def _launcher(self) -> psutil.Process | None:
        """The sandbox's first program (sandbox → its init → launcher), when it runs."""
        import psutil

        try:
            for init in psutil.Process(self.popen.pid).children():
                for child in init.children():
                    return child
        except psutil.Error:
            pass
        return None

    def signal_group(self, sig: int) -> None:
        if self.sandboxed and sig != signal.SIGKILL:
            # The launcher passes it to every process inside (background jobs too);
            # a signal to the sandbox itself would end it without a grace.
            import psutil

            launcher = self._launcher()
            if launcher is not None:
                with contextlib.suppress(psutil.Error):
                    launcher.send_signal(sig)
                return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pgid, sig)

    def others_alive(self) -> tuple[tuple[int, tuple[str, ...]], ...]:
        """Processes inside the sandbox other than its machinery and the agent."""
        import psutil

        launcher = self._launcher()
        if launcher is None:
            return ()
        found = []
        try:
            children = launcher.children()
            agent = min(children, key=lambda p: p.create_time()) if children else None
            for proc in launcher.children(recursive=True):
                if proc == agent or proc.status() == psutil.STATUS_ZOMBIE:
                    continue
                found.append((proc.pid, tuple(proc.cmdline()[:8])))
            init = launcher.parent()
            for proc in init.children() if init is not None else []:
                if proc != launcher and proc.status() != psutil.STATUS_ZOMBIE:
                    found.append((proc.pid, tuple(proc.cmdline()[:8])))
                    found.extend((p.pid, tuple(p.cmdline()[:8])) for p in proc.children(True))
        except psutil.Error:
            pass
        return tuple(found)

    def stop(self, grace: float, signalled: Callable[[], None] | None = None) -> str:
        """SIGTERM to the group, SIGKILL after ``grace`` seconds. Returns how it ended.

        ``signalled`` runs right after the SIGTERM, before any wait: an agent
        that obeys is already going while it runs.
        """
        if not self.group_alive():
            return "exited"
        self.signal_group(signal.SIGTERM)
        if signalled is not None:
            signalled()
        if wait_until(lambda: not self.group_alive(), grace):
            return "sigterm"
        if self.sandboxed:
            self.killed_at_stop = self.others_alive()
        self.signal_group(signal.SIGKILL)
        wait_until(lambda: not self.group_alive(), 5.0)
        return "sigkill"

    def close(self) -> None:
        """After the agent's group is gone: reap the leader and close our pipe end."""
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(timeout=5)
        for stream in (self.popen.stdout, self.popen.stderr):
            if stream is not None:
                stream.close()
        self.release_guardian()

    def release_guardian(self) -> None:
        """Tell the guardian the run ended normally, so it exits without acting."""
        if self._guardian_fd is not None:
            with contextlib.suppress(OSError):
                os.write(self._guardian_fd, b"done")
            with contextlib.suppress(OSError):
                os.close(self._guardian_fd)
            self._guardian_fd = None
        if self.guardian is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.guardian.wait(timeout=5)


def wait_until(predicate: object, timeout: float, interval: float = 0.005) -> bool:
    """Poll ``predicate`` until it is true or ``timeout`` passes."""
    assert callable(predicate)
    end = time.monotonic() + timeout
    while True:
        if predicate():
            return True
        if time.monotonic() >= end:
            return False
        time.sleep(interval)
        interval = min(interval * 2, 0.05)


def _behind_env(argv: Sequence[str]) -> str | None:
    """The program ``env NAME=VALUE … PROGRAM …`` runs, None when argv is no such call."""
    if not argv or Path(argv[0]).name != "env":
        return None
    for arg in argv[1:]:
        if "=" not in arg:
            return None if arg.startswith("-") else arg
    return None


class Wrapper(Protocol):
    """What starts the agent inside a sandbox (``tether.sandbox``): the argv that runs
    the agent's argv in it, and the file descriptors that stay open for that program."""

    @property
    def pass_fds(self) -> tuple[int, ...]: ...

    def command(self, argv: list[str]) -> list[str]: ...


def spawn_agent(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: Path,
    harness: str,
    kill_grace: float,
    sandbox: Wrapper | None = None,
) -> AgentProcess:
    """Start the agent in a new session (own process group), stdout and stderr piped,
    inside ``sandbox`` when there is one."""
    wrapped = _behind_env(argv)
    if wrapped is not None and shutil.which(wrapped, path=env.get("PATH")) is None:
        # ``env VAR=… prog …`` (Vibe's model and home): env itself starts fine, so
        # a missing program would only show as env's exit 127.
        raise HarnessNotFoundError(harness, wrapped)
    if sandbox is not None and shutil.which(argv[0], path=env.get("PATH")) is None:
        # inside, only the launcher would know, as an exit 127
        raise HarnessNotFoundError(harness, argv[0])
    command = list(argv) if sandbox is None else sandbox.command(list(argv))
    try:
        popen = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=dict(env),
            start_new_session=True,
            preexec_fn=_die_with_parent,
            pass_fds=() if sandbox is None else sandbox.pass_fds,
            bufsize=0,
        )
    except FileNotFoundError as exc:
        raise HarnessNotFoundError(harness, argv[0]) from exc
    except PermissionError as exc:
        raise HarnessNotFoundError(harness, argv[0]) from exc
    pgid = popen.pid
    read_fd, write_fd = os.pipe()
    guardian: subprocess.Popen[bytes] | None
    try:
        guardian = subprocess.Popen(
            [
                sys.executable,
                "-P",
                "-m",
                "tether.runs.guardian",
                str(read_fd),
                str(pgid),
                str(kill_grace),
            ],
            pass_fds=(read_fd,),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError:
        guardian = None
    os.close(read_fd)
    os.set_inheritable(write_fd, False)
    return AgentProcess(
        popen=popen,
        pgid=pgid,
        guardian=guardian,
        _guardian_fd=write_fd,
        sandboxed=sandbox is not None,
    )
