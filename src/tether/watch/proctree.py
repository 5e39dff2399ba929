"""Who runs: agent processes found in the process tree (psutil), never by pane titles.

A subagent "runs" when a live agent process (``tether.core.agents``) sits
somewhere below its pane's shell or inside its run's process group. The pane's
current command (``bash`` while ``bash -c "… pi …"`` runs pi as a child) and
keywords in a window title say nothing; the tree does.

One :class:`ProcessTable` is a snapshot taken once per watch cycle: parent
links and names for every process, command lines read lazily and cached by
``(pid, create_time)`` across snapshots (a pid reused by a new process gets a new
entry), so a cycle over 50 subagents costs one pass over the process table.

On Linux the table is one read of each ``/proc/PID/stat`` (``gate.proc``) and
psutil is loaded only for a command line: a fresh ``tether status`` would spend
more on psutil's import and objects than on the whole table (bench/status.py).
Elsewhere psutil reads it.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass

from tether.core.agents import agent_names, match_agent
from tether.core.process_tree import process_table


@dataclass(frozen=True)
class AgentProcess:
    pid: int
    name: str  # the matched agent name (``pi``, ``claude``, ``tether.harnesses.scripted``)
    create_time: float


class ProcessInspector:
    """Takes snapshots; keeps the caches that make repeated snapshots cheap."""

    def __init__(self) -> None:
        self.names = agent_names()
        # keyed by name too: exec keeps the pid and start time (``bash -c "cd x && pi"``
        # becomes pi) but changes the name
        self._argv: dict[tuple[int, float, str], tuple[str, ...]] = {}
        self._agent: dict[tuple[int, float, str], str | None] = {}

    def snapshot(self) -> ProcessTable:
        parents: dict[int, int] = {}
        names: dict[int, str] = {}
        created: dict[int, float] = {}
        rows = process_table()
        if rows is not None:
            for row in rows:
                parents[row.pid] = row.ppid
                names[row.pid] = row.comm
                created[row.pid] = row.start_time
        else:
            import psutil

            for proc in psutil.process_iter(["ppid", "name", "create_time"]):
                info = proc.info
                if info.get("ppid") is None:
                    continue
                parents[proc.pid] = int(info["ppid"])
                names[proc.pid] = str(info.get("name") or "")
                created[proc.pid] = float(info.get("create_time") or 0.0)
        live = set(parents)
        # forget cache entries of processes that are gone
        self._argv = {k: v for k, v in self._argv.items() if k[0] in live}
        self._agent = {k: v for k, v in self._agent.items() if k[0] in live}
        return ProcessTable(self, parents, names, created)

    def argv(self, pid: int, created: float, name: str = "") -> tuple[str, ...]:
        key = (pid, created, name)
        cached = self._argv.get(key)
        if cached is not None:
            return cached
        import psutil

        try:
            argv = tuple(psutil.Process(pid).cmdline())
        except (psutil.Error, OSError):
            argv = ()
        self._argv[key] = argv
        return argv

    def agent_name(self, pid: int, created: float, name: str) -> str | None:
        key = (pid, created, name)  # a process may rename itself (node's process.title)
        if key in self._agent:
            return self._agent[key]
        found = match_agent(name, self.argv(pid, created, name), self.names)
        self._agent[key] = found
        return found


class ProcessTable:
    """One snapshot of the process table."""

    def __init__(
        self,
        inspector: ProcessInspector,
        parents: dict[int, int],
        names: dict[int, str],
        created: dict[int, float],
    ) -> None:
        self._inspector = inspector
        self.parents = parents
        self.names = names
        self.created = created
        self._children: dict[int, list[int]] = {}
        for pid, ppid in parents.items():
            self._children.setdefault(ppid, []).append(pid)

    def alive(self, pid: int | None) -> bool:
        return pid is not None and pid in self.parents

    def children(self, pid: int) -> list[int]:
        return self._children.get(pid, [])

    def descendants(self, pid: int) -> Iterator[int]:
        """Every process below ``pid``, nearest first."""
        queue = deque(self.children(pid))
        seen: set[int] = set()
        while queue:
            child = queue.popleft()
            if child in seen:
                continue
            seen.add(child)
            yield child
            queue.extend(self.children(child))

    def ancestors(self, pid: int) -> Iterator[int]:
        """``pid``'s parents, nearest first, up to (not including) pid 1/0."""
        seen: set[int] = set()
        current = self.parents.get(pid)
        while current is not None and current > 1 and current not in seen:
            seen.add(current)
            yield current
            current = self.parents.get(current)

    def is_below(self, pid: int, ancestor: int) -> bool:
        return pid == ancestor or ancestor in self.ancestors(pid)

    def argv(self, pid: int) -> tuple[str, ...]:
        return self._inspector.argv(pid, self.created.get(pid, 0.0), self.names.get(pid, ""))

    def agent(self, pid: int) -> AgentProcess | None:
        """``pid`` itself, when it is an agent process."""
        if pid not in self.parents:
            return None
        created = self.created.get(pid, 0.0)
        found = self._inspector.agent_name(pid, created, self.names.get(pid, ""))
        return None if found is None else AgentProcess(pid, found, created)

    def find_agent(self, root: int, include_root: bool = True) -> AgentProcess | None:
        """The nearest agent process at or below ``root``."""
        if include_root:
            found = self.agent(root)
            if found is not None:
                return found
        for pid in self.descendants(root):
            found = self.agent(pid)
            if found is not None:
                return found
        return None

    def agent_in_group(self, pgid: int) -> AgentProcess | None:
        """An agent process in process group ``pgid`` (the leader first)."""
        found = self.agent(pgid)
        if found is not None:
            return found
        for pid in self.parents:
            try:
                if os.getpgid(pid) != pgid:
                    continue
            except OSError:
                continue
            found = self.agent(pid)
            if found is not None:
                return found
        return None
