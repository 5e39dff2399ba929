"""The supervisor's side of one sandboxed run: the gate socket, the sandbox, what it saw.

``SandboxedRun`` starts the gate's server on the run's socket (the supervisor
counts every call of the agent: ``tether.gate.serve``) next to the sandbox's
network proxy, gives the supervisor the argv and environment to start the
agent with, and after the end collects the sandbox's findings: the hosts it
refused, the processes that outlived the agent or that the stop had to kill,
the protected paths the run created (moved aside).
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from tether.gate.serve import GateServer
from tether.runs import sandboxing
from tether.runs.process import AgentProcess
from tether.runs.record import RunPaths
from tether.sandbox.runtime import Survivor


@dataclass(frozen=True)
class Found:
    """The agent's exit status inside the sandbox and the findings for the record."""

    status: int | None
    findings: sandboxing.Findings


class SandboxedRun:
    def __init__(
        self,
        prepared: sandboxing.Prepared,
        paths: RunPaths,
        session_id: str,
        env: Mapping[str, str],
    ) -> None:
        self.prepared = prepared
        self.paths = paths
        self.sandbox = prepared.sandbox
        self.env = self.sandbox.env(env)
        # decided from the agent's environment as it is inside (TETHER_GATE_SOCKET set:
        # the command policy's belt stays off where the sandbox is the wall)
        self.server = GateServer(str(self.sandbox.gate_socket), session_id, self.env).start()
        self._open = True

    @property
    def pass_fds(self) -> tuple[int, ...]:
        return self.sandbox.pass_fds

    def command(self, argv: list[str]) -> list[str]:
        return self.sandbox.command(argv)

    def started(self) -> None:
        self.sandbox.started()

    def finish(self, agent: AgentProcess) -> Found:
        killed = [Survivor(pid, argv) for pid, argv in agent.killed_at_stop]
        report = self._close(killed)
        moved = sandboxing.quarantine(self.prepared.watched, self.paths)
        return Found(report.status, sandboxing.findings(report, moved))

    def _close(self, killed: Sequence[Survivor]) -> sandboxing.SandboxReport:
        self._open = False
        self.server.stop()
        return self.sandbox.close(killed)

    def close_if_open(self) -> None:
        """After an error before the end: nothing of the run's sandbox is left listening."""
        if self._open:
            with contextlib.suppress(OSError):
                self._close(())
