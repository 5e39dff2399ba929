"""Which panes may hold subagents, and the agent processes seen but not counted.

``[watch] subagents_scope`` chooses the panes: ``session`` (the default) the
panes of the tmux sessions that hold a registered orchestrator's pane, all
their windows; ``server`` every pane of the watched tmux server; ``folders``
none beyond ``subagents_folders``. Nothing is invisible in silence: every
agent process on the machine that is neither a subagent, nor part of one, nor
an orchestrator, nor below another agent is named with the reason it does not
count (``tether watch`` logs it, ``subagents list`` and ``watch once`` show it).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from tether.watch.proctree import ProcessTable
from tether.watch.subagents import Subagent, under
from tether.watch.tmux import Pane

SCOPES = ("session", "server", "folders")


@dataclass(frozen=True)
class NotCounted:
    """An agent process the watchdog saw and does not count as a subagent."""

    pid: int
    name: str
    pane: str | None
    reason: str

    def describe(self) -> str:
        where = f" in pane {self.pane}" if self.pane else ""
        return f"{self.name} (pid {self.pid}){where}: {self.reason}"

    def as_dict(self) -> dict[str, Any]:
        return {"pid": self.pid, "name": self.name, "pane": self.pane, "reason": self.reason}


def by_scope(scope: str, sessions: Collection[str]) -> Callable[[Pane], bool]:
    """Whether a pane is one whose live agent makes it a subagent, for ``scope``."""
    if scope == "server":
        return lambda pane: True
    if scope == "session":
        return lambda pane: pane.session in sessions
    return lambda pane: False


@dataclass(frozen=True)
class Scope:
    """Which panes hold subagents: ``subagents_scope`` and what it is measured against."""

    name: str  # one of SCOPES
    sessions: Collection[str]  # the orchestrators' tmux sessions
    folders: Sequence[str]  # subagents_folders


def _pane_reason(pane: Pane, scope: Scope) -> str:
    sessions, folders = scope.sessions, scope.folders
    hint = f"`tether watch add-subagent --tmux-pane {pane.pane_id}` counts it"
    if scope.name == "session":
        if not sessions:
            return (
                f"tmux session {pane.session!r}, and no registered orchestrator has a pane on "
                f"this tmux server, so no session is watched (subagents_scope = session); {hint}"
            )
        watched = ", ".join(repr(s) for s in sorted(sessions))
        return (
            f"tmux session {pane.session!r} is not the orchestrator's ({watched}; "
            f"subagents_scope = session); {hint}"
        )
    if scope.name == "folders":
        if not folders:
            return f"subagents_scope = folders and no subagents_folders are set; {hint}"
        return (
            f"its folder {pane.current_path} is not under subagents_folders "
            f"(subagents_scope = folders); {hint}"
        )
    return f"not counted; {hint}"  # scope server counts every pane: only a skipped one lands here


def not_counted(
    table: ProcessTable,
    panes: Sequence[Pane],
    subagents: Iterable[Subagent],
    orchestrators: Iterable[tuple[str, Collection[int]]],
    run_groups: Collection[int],
    scope: Scope,
) -> list[NotCounted]:
    """The agent processes seen and not counted, each with its reason.

    ``orchestrators``: (name, the pids at the root of its tree). An agent below
    another agent process (its child or a helper) is part of that one and not
    named; nor are the processes of ``tether run`` runs (``run_groups``), nor this
    process.
    """
    counted: set[int] = set()
    for sub in subagents:
        if sub.agent is not None:
            counted.add(sub.agent.pid)
        if sub.pane is not None and sub.running:
            counted.add(sub.pane.pane_pid)
    orch_roots = {pid: name for name, pids in orchestrators for pid in pids}
    pane_by_pid = {p.pane_pid: p for p in panes if not p.dead}
    skip = {os.getpid()}
    out: list[NotCounted] = []
    for pid in sorted(table.parents):
        if pid in skip:
            continue
        agent = table.agent(pid)
        if agent is None:
            continue
        chain = [pid, *table.ancestors(pid)]
        if any(table.agent(above) is not None for above in chain[1:]):
            continue  # part of another agent
        if any(above in counted for above in chain):
            continue
        if any(above in skip for above in chain):
            continue
        try:
            if os.getpgid(pid) in run_groups:
                continue
        except OSError:
            continue
        pane = next((pane_by_pid[above] for above in chain if above in pane_by_pid), None)
        pane_id = pane.pane_id if pane is not None else None
        orch = next((orch_roots[above] for above in chain if above in orch_roots), None)
        if orch is not None:
            out.append(NotCounted(pid, agent.name, pane_id, f"the orchestrator {orch}"))
            continue
        if pane is None:
            reason = (
                "runs in no pane of the watched tmux server; "
                f"`tether watch add-subagent --pid {pid}` counts it"
            )
        else:
            reason = _pane_reason(pane, scope)
            if scope.folders and under(pane.current_path, scope.folders) is not None:
                continue  # listed as a folder pane already
        out.append(NotCounted(pid, agent.name, pane_id, reason))
    return out
