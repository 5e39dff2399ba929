"""What a sandbox is made of, said once for every backend.

A ``SandboxSpec`` names paths and doors, never a mechanism: the Linux backend
(``tether.sandbox.bwrap``) turns it into bubblewrap's arguments, and a macOS
backend would turn it into a profile of its own. ``tether.sandbox.plan`` builds
it for one run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from tether.core.agent_tree import INSIDE_DIR

PROXY_SOCKET = INSIDE_DIR / "proxy.sock"
# Roots replaced by an empty private folder inside: other people's sockets
# (tmux, ssh-agent, docker, the session bus) live there. What a run needs under
# them is bound back (``SandboxSpec.visible``, ``writable``).
PRIVATE_ROOTS = (Path("/tmp"), Path("/var/tmp"), Path("/run"), Path("/dev/shm"))  # noqa: S108


@dataclass(frozen=True)
class Forward:
    """An allowed loopback endpoint the agent reaches at its own address inside."""

    host: str
    port: int


@dataclass(frozen=True)
class SandboxSpec:
    """The agent's world. Paths are absolute, inside and outside alike."""

    cwd: Path
    # read-write (the work folder, the CLI's state folder, a run's extra folders)
    writable: tuple[Path, ...] = ()
    # read-only and unrenameable although inside a writable folder
    protected: tuple[Path, ...] = ()
    # writable again inside a protected folder (the board's INBOX)
    reopened: tuple[Path, ...] = ()
    # read-only, bound back where a private root hides them (HOME under /tmp)
    visible: tuple[Path, ...] = ()
    # empty inside (secrets)
    hidden: tuple[Path, ...] = ()
    # host socket -> its path inside
    sockets: tuple[tuple[Path, Path], ...] = ()
    # the launcher's doors: the proxy's port on the sandbox's loopback
    proxy_port: int | None = None
    forwards: tuple[Forward, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
