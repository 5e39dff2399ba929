"""Which session a call belongs to.

In order: the session id in the hook payload; ``TETHER_SESSION_ID``; the
harness's own variable; then the long-lived agent process found by walking up
``/proc`` from the gate's parent (pid + start time). The gate's own pid and the
short-lived processes of one call (``sh -c``, wrappers) are never the answer:
with a per-call id the counter never accumulates. What the walk alone cannot
settle (a process of the call that looks long-lived) is settled against the
gate's memory of earlier calls in :mod:`tether.gate.anchor`.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from tether.core import process_tree as proc

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

# The source of a call whose session cannot be told: the gate refuses it.
UNRESOLVED = "unresolved"
# How many long-lived candidates above the chosen process the gate remembers.
MAX_ABOVE = 8


class Walk:
    """What the process walk found: the process it would count under, why, and the
    processes above it that are not one-call processes (nearest first).

    ``settled``: the walk is sure (a known agent, init). Otherwise the pick is
    *suspect*: it may live for one call only: it runs the gate itself (a wrapper, or
    an agent that runs its hooks without a shell), it runs the gate through
    ``sh -c`` (an agent, or a wrapper the agent started directly), a one-call
    process started it (``inside``: it runs inside a command), or there is
    nothing but one-call processes. The
    gate's memory of earlier calls has the last word on a suspect
    (:mod:`tether.gate.anchor`).
    """

    __slots__ = ("above", "inside", "pick", "settled", "why")

    def __init__(
        self,
        pick: proc.ProcInfo,
        why: str,
        above: tuple[proc.ProcInfo, ...] = (),
        *,
        inside: bool = False,
        settled: bool = False,
    ) -> None:
        self.pick = pick
        self.why = why
        self.above = above
        self.inside = inside
        self.settled = settled

    def __repr__(self) -> str:
        return f"Walk({self.pick!r}, {self.why!r}, above={len(self.above)})"


class Resolved:
    """A context key (what the gate counts under, before any re-pointing) and its source.

    ``walk`` is set when the key comes from the process walk and still has to be
    settled against the gate's memory (:func:`tether.gate.anchor.settle`).
    """

    __slots__ = ("key", "source", "walk")

    def __init__(self, key: str, source: str, walk: Walk | None = None) -> None:
        self.key = key
        self.source = source
        self.walk = walk

    @property
    def unresolved(self) -> bool:
        return self.source == UNRESOLVED

    def __repr__(self) -> str:
        return f"Resolved({self.key!r}, {self.source!r})"


def walk(start_pid: int | None = None) -> Walk | None:
    """The long-lived process behind this call, by the process tree alone.

    Walks up from the parent of the gate: the nearest known agent executable
    (certain); else the nearest process that is not a one-call process (``sh
    -c``, ``env``, ``timeout``, the gate ...): when the gate's parent is one,
    the process that started them, as an agent starts each command; else
    the outermost. init counts as a long-lived process when it is the gate's
    parent or started a one-call process of the call (an agent that is a
    container's first process). Whether that process outlives the call (a
    wrapper such as ``python wrapper.py``, in its own process group or session
    or not, running the gate itself or through ``sh -c``, looks long-lived
    here) is settled by
    :func:`tether.gate.anchor.settle`.
    """
    # /proc is read only when no id named the session: most calls never get here
    from tether.core import process_tree as proc
    from tether.core.agents import match_agent

    parent = os.getppid() if start_pid is None else start_pid
    chain = proc.ancestors(parent)
    if not chain:
        # The gate's parent is init: in a container, the agent itself.
        init = proc.read_proc(1) if parent == 1 else None
        return None if init is None else Walk(init, "outermost", settled=True)
    transient = [proc.is_transient(info) for info in chain]
    if transient[-1] and chain[-1].ppid == 1:
        # init started a one-call process of this call: in a container, init is
        # the agent that runs its commands through ``sh -c``.
        init = proc.read_proc(1)
        if init is not None:
            chain.append(init)
            transient.append(False)
    for info in chain:
        if match_agent(info.comm, info.argv) is not None:
            return Walk(info, "agent", settled=True)
    if transient[0]:
        # The gate's parent is a one-call process (``sh -c`` ...): the process that
        # started that run of one-call processes.
        index = next((i for i, one_call in enumerate(transient) if not one_call), None)
        why = "command-parent"
    else:
        index, why = 0, "nearest"
    if index is None:
        return Walk(chain[-1], "outermost")
    above = tuple(
        info
        for info, one_call in zip(chain[index + 1 :], transient[index + 1 :], strict=True)
        if not one_call
    )[:MAX_ABOVE]
    inside = index + 1 < len(chain) and transient[index + 1]
    # Every pick here may last for one call only: the gate's parent (a wrapper),
    # a process started inside a command, or a process that runs its commands
    # through ``sh -c`` (the agent, or a wrapper the agent started directly).
    return Walk(chain[index], why, above, inside=inside)


def process_key(info: proc.ProcInfo) -> str:
    from tether.core import process_tree as proc

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
    found = walk(start_pid)
    if found is None:
        # No /proc to read: nothing tells one call from the next.
        return Resolved("", UNRESOLVED)
    if found.settled:
        return Resolved(process_key(found.pick), f"process:{found.why}")
    return Resolved(process_key(found.pick), f"process:{found.why}", found)
