"""The probe once more, inside tether's sandbox: does this CLI work the way a run starts it?

A run starts every agent inside the sandbox (``tether.runs.sandboxing``), with
its gate answered by the run's supervisor over a socket. The sandboxed probe
does the same with the probe's CLI: the CLI's own state folder, the probe's
two files and nothing else writable, only the scripted model server
reachable, the gate's calls counted by a server here under one session with a
budget of 1. The verdict is the probe's: call 1 ran, call 2 was refused.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from tether.gate.counter import set_session_budget
from tether.gate.serve import GateServer
from tether.harnesses.sandboxing import sandbox_needs
from tether.sandbox import launcher
from tether.sandbox.backend import backend_for_this_machine
from tether.sandbox.hosts import Host, host_of_url
from tether.sandbox.runtime import Sandbox
from tether.sandbox.spec import SandboxSpec

PROBE_SESSION = "doctor-sandboxed-probe"


@dataclass(frozen=True)
class Sandboxed:
    """How to start the probe's CLI inside the sandbox."""

    argv: list[str]
    env: dict[str, str]
    pass_fds: tuple[int, ...]
    sandbox: Sandbox


def unavailable() -> str | None:
    """Why no sandbox can start here (with the fix), None when one can."""
    return backend_for_this_machine().unavailable()


def own_sandbox_off(harness: str, env: Mapping[str, str]) -> tuple[str, ...]:
    """The flags that switch the CLI's own sandbox off (it cannot nest inside tether's)."""
    return sandbox_needs(harness, env, ()).args


@contextlib.contextmanager
def sandboxed(
    harness: str,
    argv: Sequence[str],
    env: Mapping[str, str],
    project: str,
    writable: Sequence[Path],
    gate_home: Path,
) -> Iterator[Sandboxed]:
    """The probe's argv and environment inside a sandbox, its gate served here."""
    needs = sandbox_needs(harness, env, list(argv))
    for folder in needs.state_dirs:
        folder.mkdir(parents=True, exist_ok=True)
    visible = [Path(project), *writable, gate_home, Path(sys.prefix), Path(launcher.__file__)]
    visible += [Path(p) for p in env.get("PATH", "").split(os.pathsep) if p]
    if env.get("HOME"):
        visible.append(Path(env["HOME"]))
    spec = SandboxSpec(
        cwd=Path(project),
        writable=tuple(p.resolve() for p in (*writable, *needs.state_dirs) if p.exists()),
        visible=tuple(p.resolve() for p in visible if p.exists()),
    )
    hosts: list[Host] = [h for url in needs.urls if (h := host_of_url(url)) is not None]
    sandbox = Sandbox(backend_for_this_machine(), spec, tuple(dict.fromkeys(hosts)))
    gate_home.mkdir(parents=True, exist_ok=True)
    set_session_budget(gate_home, PROBE_SESSION, calls=1)
    server_env = {"TETHER_HOME": str(gate_home)}
    server = GateServer(str(sandbox.gate_socket), PROBE_SESSION, server_env).start()
    try:
        yield Sandboxed(
            sandbox.command(list(argv)),
            sandbox.env(env),
            sandbox.pass_fds,
            sandbox,
        )
    finally:
        server.stop()
        sandbox.close()
