"""The seam: which mechanism makes a sandbox on this machine.

A backend turns a ``SandboxSpec`` and the agent's argv into the argv that runs
the agent inside the sandbox, and says when it cannot (with the fix, one
line). Linux has bubblewrap (``tether.sandbox.bwrap``). Another platform plugs
in here with one class (macOS: ``sandbox-exec`` profiles, or Anthropic's
sandbox runtime); until then a run there needs ``--no-sandbox`` or
``[sandbox] mode = "off"``.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Protocol

from tether.sandbox.spec import SandboxSpec


class Backend(Protocol):
    name: str

    def unavailable(self) -> str | None:
        """Why no sandbox can start here, with the fix; None when one can."""
        ...

    def command(self, spec: SandboxSpec, launcher: Sequence[str], report_fd: int) -> list[str]:
        """The argv that runs ``launcher`` (the launcher and the agent's argv) inside."""
        ...


class _Missing:
    """A platform without a backend yet."""

    name = "none"

    def unavailable(self) -> str | None:
        return (
            f"no sandbox backend for {sys.platform} yet (Linux uses bubblewrap); "
            'run with --no-sandbox or set [sandbox] mode = "off" in tether.toml'
        )

    def command(self, spec: SandboxSpec, launcher: Sequence[str], report_fd: int) -> list[str]:
        raise RuntimeError(self.unavailable())


def backend_for_this_machine() -> Backend:
    platform: str = sys.platform
    if platform.startswith("linux"):
        from tether.sandbox.bwrap import Bubblewrap

        return Bubblewrap()
    return _Missing()
