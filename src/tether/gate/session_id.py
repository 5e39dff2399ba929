"""Which session a call belongs to.

In order: the session id in the hook payload; ``TETHER_SESSION_ID``; the
harness's own variable; then the long-lived agent process found by walking up
``/proc`` from the gate's parent (pid + start time). The gate's own pid and the
short-lived processes of one call (``sh -c``, wrappers) are never the answer:
with a per-call id the counter never accumulates.
"""

from __future__ import annotations

import os

from tether.gate import proc
from tether.gate.agents import match_agent

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

# The harnesses' own session variables. Claude Code 2.1 exports
# CLAUDE_CODE_SESSION_ID to hooks and tools; Codex 0.171 knows CODEX_THREAD_ID;
# Copilot CLI 1.0, Pi 0.73 and Vibe 2.26 export none (their payloads carry the id).
HARNESS_VARS: dict[str, tuple[str, ...]] = {
    "claude-code": ("CLAUDE_CODE_SESSION_ID",),
    "codex": ("CODEX_THREAD_ID", "CODEX_SESSION_ID"),
    "copilot": (),
    "pi": (),
    "vibe": (),
}
ALL_HARNESS_VARS: tuple[str, ...] = tuple(name for names in HARNESS_VARS.values() for name in names)


class Resolved:
    """A context key (what the gate counts under, before any re-pointing) and its source."""

    __slots__ = ("key", "source")

    def __init__(self, key: str, source: str) -> None:
        self.key = key
        self.source = source

    def __repr__(self) -> str:
        return f"Resolved({self.key!r}, {self.source!r})"


def fallback_process(start_pid: int | None = None) -> tuple[proc.ProcInfo | None, str]:
    """The long-lived process behind this call, and why it was chosen.

    Walks up from the parent of the gate: the nearest known agent executable;
    else the nearest process-group leader that is not a one-call process (an
    agent started by a shell with job control, or by ``tether run``, leads its
    group, while the per-call children it spawns stay in that group); else the
    nearest process that is not a one-call process.
    """
    parent = os.getppid() if start_pid is None else start_pid
    chain = proc.ancestors(parent)
    if not chain:
        return None, "none"
    for info in chain:
        if match_agent(info.comm, info.argv) is not None:
            return info, "agent"
    for info in chain:
        if info.pgrp == info.pid and not proc.is_transient(info):
            return info, "group-leader"
    for info in chain:
        if not proc.is_transient(info):
            return info, "long-lived"
    return chain[-1], "outermost"


def process_key(info: proc.ProcInfo) -> str:
    return f"proc:{proc.boot_id()}:{info.pid}:{info.start_ticks}"


def resolve(
    harness: str | None,
    payload_session: str | None,
    environ: Mapping[str, str] | None = None,
    start_pid: int | None = None,
) -> Resolved:
    env = os.environ if environ is None else environ
    if payload_session:
        return Resolved(payload_session, "payload")
    explicit = env.get("TETHER_SESSION_ID")
    if explicit:
        return Resolved(explicit, "env:TETHER_SESSION_ID")
    names = HARNESS_VARS.get(harness or "", ALL_HARNESS_VARS)
    for name in names:
        value = env.get(name)
        if value:
            return Resolved(value, f"env:{name}")
    info, why = fallback_process(start_pid)
    if info is None:
        # No /proc (or an orphaned gate): the parent pid is the best we have,
        # and the source says so, so status output makes the weakness visible.
        return Resolved(f"ppid:{os.getppid()}", "ppid")
    return Resolved(process_key(info), f"process:{why}")
