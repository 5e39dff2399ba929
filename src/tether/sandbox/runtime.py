"""One sandbox while its run lasts: sockets, the network proxy, the argv, the end report.

The supervisor makes a ``Sandbox`` before it starts the agent, runs the argv
from ``command`` with ``pass_fds``, calls ``started`` once the process is up,
and ``close`` after it ended; ``report`` then says how the agent ended inside
and which other processes were still alive when it did (they died with the
sandbox). Sockets live in a short private folder outside (a Unix socket path
has at most 107 bytes; named for the supervisor, so one left behind by a
supervisor killed before ``close`` is removed later: ``sandbox/socket_folder.py``)
and appear inside under ``/run/tether``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from tether.core.agent_tree import GATE_SOCKET
from tether.sandbox import launcher, socket_folder
from tether.sandbox.backend import Backend
from tether.sandbox.hosts import Host
from tether.sandbox.network import NetworkProxy, Refusal
from tether.sandbox.spec import PROXY_SOCKET, Forward, SandboxSpec

PROXY_PORTS = (3128, 3129, 8118, 18080)
PROXY_VARIABLES = (
    "HTTPS_PROXY",
    "HTTP_PROXY",
    "ALL_PROXY",
    "https_proxy",
    "http_proxy",
    "all_proxy",
)
# Unset inside: every proxy-aware request goes to the proxy, which decides and
# records it; loopback endpoints that are allowed are served at their own address too.
UNSET_VARIABLES = (
    "NO_PROXY",
    "no_proxy",
    "XDG_RUNTIME_DIR",
    "DBUS_SESSION_BUS_ADDRESS",
    "SSH_AUTH_SOCK",
    "TMUX",
    "TMUX_PANE",
)
INSIDE_TMP = "/tmp"  # noqa: S108 - the sandbox's own private /tmp, not the host's


@dataclass(frozen=True)
class Survivor:
    """A process still alive inside when the agent ended (the sandbox's end killed it)."""

    pid: int
    argv: tuple[str, ...]

    def as_dict(self) -> dict[str, object]:
        return {"pid": self.pid, "argv": list(self.argv)}


@dataclass(frozen=True)
class SandboxReport:
    """What one sandbox saw: the agent's exit status inside, survivors, refused hosts."""

    status: int | None = None
    survivors: tuple[Survivor, ...] = ()
    refused: tuple[Refusal, ...] = ()
    killed_at_stop: tuple[Survivor, ...] = field(default_factory=tuple)


def _proxy_port(forwards: Sequence[Forward]) -> int:
    taken = {f.port for f in forwards}
    return next(p for p in PROXY_PORTS if p not in taken)


def inside_env(base: Mapping[str, str], proxy_port: int) -> dict[str, str]:
    """The agent's environment inside: a private TMPDIR and cache, the proxy, the gate socket."""
    env = {k: v for k, v in base.items() if k not in UNSET_VARIABLES}
    proxy = f"http://127.0.0.1:{proxy_port}"
    env.update(dict.fromkeys(PROXY_VARIABLES, proxy))
    env.update(
        TMPDIR=INSIDE_TMP,
        XDG_CACHE_HOME=f"{INSIDE_TMP}/.cache",
        TETHER_GATE_SOCKET=str(GATE_SOCKET),
    )
    return env


class Sandbox:
    """One run's sandbox. ``hosts`` are the only ones the agent may reach."""

    def __init__(self, backend: Backend, spec: SandboxSpec, hosts: tuple[Host, ...]) -> None:
        self.backend = backend
        self.hosts = hosts
        forwards = tuple(
            dict.fromkeys(Forward(h.name, h.port) for h in hosts if h.loopback and h.port)
        )
        self.spec = replace(spec, forwards=forwards, proxy_port=_proxy_port(forwards))
        # named for this process: a folder whose owner was killed before close()
        # is removed at a later sandbox's start (sandbox/socket_folder.py)
        self.socket_dir = socket_folder.make()
        self.gate_socket = self.socket_dir / "gate.sock"
        self._proxy = NetworkProxy(hosts, self.socket_dir / "proxy.sock").start()
        self._report_read, self._report_write = os.pipe()
        os.set_inheritable(self._report_read, False)
        self._raw_report = b""

    @property
    def pass_fds(self) -> tuple[int, ...]:
        return (self._report_write,)

    def env(self, base: Mapping[str, str]) -> dict[str, str]:
        assert self.spec.proxy_port is not None
        return inside_env(base, self.spec.proxy_port)

    def command(self, argv: Sequence[str]) -> list[str]:
        assert self.spec.proxy_port is not None
        doors = [f"{f.host}:{f.port}" for f in self.spec.forwards]
        sockets = [(self._proxy.socket_path, PROXY_SOCKET)]
        if self.gate_socket.exists():
            sockets.append((self.gate_socket, GATE_SOCKET))
        spec = replace(self.spec, sockets=(*self.spec.sockets, *sockets))
        program = [
            sys.executable,
            "-I",
            "-S",
            launcher.__file__,
            str(self._report_write),
            str(self.spec.proxy_port),
            str(PROXY_SOCKET),
            *doors,
            "--",
        ]
        return self.backend.command(spec, [*program, *argv], self._report_write)

    def started(self) -> None:
        """After the sandbox's process is up: only it holds the report's write end now."""
        self._report_write = _close_once(self._report_write)

    def close(self, killed_at_stop: Sequence[Survivor] = ()) -> SandboxReport:
        """Stop the proxy, read the launcher's report, remove the sockets."""
        self._proxy.stop()
        self._report_write = _close_once(self._report_write)
        if self._report_read >= 0:
            os.set_blocking(self._report_read, False)
            with contextlib.suppress(OSError):
                while chunk := os.read(self._report_read, 65536):
                    self._raw_report += chunk
        self._report_read = _close_once(self._report_read)
        shutil.rmtree(self.socket_dir, ignore_errors=True)
        status, survivors = _parse_report(self._raw_report)
        return SandboxReport(status, survivors, tuple(self._proxy.refusals), tuple(killed_at_stop))


def _close_once(fd: int) -> int:
    """Close ``fd`` if it is still ours; -1, to be stored in its place.

    A descriptor's number is free again the moment it is closed, and the
    process's other threads (a fleet executor's database connections, its
    SQLite files) take the lowest free number for what they open next. A
    second ``os.close`` of the same number would close theirs.
    """
    if fd >= 0:
        with contextlib.suppress(OSError):
            os.close(fd)
    return -1


def _parse_report(raw: bytes) -> tuple[int | None, tuple[Survivor, ...]]:
    """The launcher's report: ``status N``, then ``proc PID ARGV`` lines."""
    status: int | None = None
    survivors = []
    for line in raw.decode("utf-8", "replace").splitlines():
        kind, _, rest = line.partition(" ")
        if kind == "status" and rest.lstrip("-").isdigit():
            status = int(rest)
        elif kind == "proc":
            pid, _, argv = rest.partition(" ")
            if pid.isdigit():
                survivors.append(Survivor(int(pid), tuple(argv.split("\x1f"))))
    return status, tuple(survivors)
