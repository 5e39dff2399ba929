"""One look at the world: which subagents run, what they wait on, where the orchestrators are.

A :class:`Surveyor` keeps the caches that make a look cheap (process command
lines, log tails by size and mtime, the gate connection) and is asked once per
cycle by the daemon, and in a loop by ``tether subagents wait``.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from tether.config.schema import WatchSettings
from tether.core.errors import TetherError
from tether.gate.eventlog import GateReader
from tether.store.runs import get_run
from tether.watch.activity import gate_process_key
from tether.watch.confirm import wait_state
from tether.watch.endpoints import Endpoint, live_endpoints
from tether.watch.pane_ends import PaneEnds
from tether.watch.permissions import asks_permission
from tether.watch.proctree import AgentProcess, ProcessInspector, ProcessTable
from tether.watch.registry import Orchestrator, list_extra_subagents, list_orchestrators
from tether.watch.scope import NotCounted, Scope, by_scope, not_counted
from tether.watch.subagents import (
    LogFinder,
    PaneChoice,
    Subagent,
    pane_subagents,
    process_subagents,
    run_subagents,
)
from tether.watch.tmux import Pane, Tmux
from tether.watch.transcript import TranscriptReader
from tether.watch.wake import SubagentView

NOT_COUNTED_EVERY = 5.0


@dataclass(frozen=True)
class OrchestratorView:
    orchestrator: Orchestrator
    alive: bool
    pane: str | None  # the pane to type into (registered, or found above its pid)
    tmux: Tmux | None
    agent: AgentProcess | None
    endpoints: tuple[Endpoint, ...]
    sessions: tuple[str, ...]
    log: Path | None = None  # its own transcript, found like a subagent's, when not registered
    gone: str | None = None  # why it is not alive: "pane %3 is gone", …


@dataclass
class Survey:
    now: float
    subagents: list[SubagentView]
    orchestrators: list[OrchestratorView]
    table: ProcessTable
    panes: list[Pane] = field(default_factory=list)
    not_counted: list[NotCounted] = field(default_factory=list)

    @property
    def running(self) -> list[SubagentView]:
        return [v for v in self.subagents if v.subagent.running]


class Surveyor:
    def __init__(self, settings: WatchSettings, home: Path, tmux: Tmux | None = None) -> None:
        self.settings = settings
        self.home = Path(home)
        self.tmux = tmux if tmux is not None else Tmux(settings.tmux_socket)
        self._tmuxes: dict[str | None, Tmux] = {self.tmux.socket: self.tmux}
        self.inspector = ProcessInspector()
        self.gate = GateReader(self.home)
        self.logs = TranscriptReader()
        self.finder = LogFinder()
        self._keys: dict[tuple[int, float], str | None] = {}
        self._runs: dict[str, Subagent] = {}  # runs seen running, to report how they ended
        self.pane_ends = PaneEnds()  # pane subagents seen running: starting, ended, how
        # the tmux session of each orchestrator's pane when last seen: a pane that closes
        # leaves its session watched (subagents_scope = session) while it is registered
        self._orch_sessions: dict[int, str] = {}
        self._ignored: list[NotCounted] = []
        self._ignored_at: float | None = None

    def close(self) -> None:
        self.gate.close()

    def tmux_for(self, socket: str | None) -> Tmux:
        if socket not in self._tmuxes:
            self._tmuxes[socket] = Tmux(socket, binary=self.tmux.binary)
        return self._tmuxes[socket]

    def look(
        self, conn: sqlite3.Connection, now: float, *, with_not_counted: bool = True
    ) -> Survey:
        """One look; ``with_not_counted=False`` skips the agents seen but not counted (a
        read of every process's command line) for a caller that does not show them."""
        table = self.inspector.snapshot()
        panes = self.tmux.list_panes()
        endpoints = live_endpoints(self.home)
        orchestrators = [
            self._orchestrator(o, table, panes, endpoints) for o in list_orchestrators(conn)
        ]
        skip_panes = frozenset(v.pane for v in orchestrators if v.pane)
        skip_pids = frozenset(
            pid
            for v in orchestrators
            for pid in (v.orchestrator.pid, v.agent.pid if v.agent else None)
            if pid is not None
        )
        skip_runs = frozenset(v.orchestrator.run_id for v in orchestrators if v.orchestrator.run_id)
        scope = self.settings.subagents_scope
        sessions = self._watched_sessions(orchestrators, panes)
        extras = list_extra_subagents(conn)
        added = frozenset(
            e.tmux_pane
            for e in extras
            if e.tmux_pane is not None and (e.tmux_socket or None) == self.tmux.socket
        )
        choice = PaneChoice(
            folders=list(self.settings.subagents_folders),
            added=added,
            by_agent=by_scope(scope, sessions),
            skip_panes=skip_panes,
            skip_pids=skip_pids,
        )
        found = pane_subagents(panes, table, self.finder, choice)
        found += process_subagents(
            ((e.pid, e.pid_start_time) for e in extras if e.pid is not None),
            table,
            self.finder,
            skip_pids,
        )
        found += self.pane_ends.ended(found, panes)
        runs = run_subagents(conn, table, skip_runs)
        found += runs + self._ended_runs(conn, runs)
        found = [self.pane_ends.starting_or_ended(s, table) for s in found]
        # the whole process table is looked through for agents seen but not counted at
        # most every NOT_COUNTED_EVERY seconds: on a busy machine each new process costs
        # a read of its command line
        moment = time.monotonic()
        due = self._ignored_at is None or moment - self._ignored_at >= NOT_COUNTED_EVERY
        if with_not_counted and due:
            self._ignored_at = moment
            self._ignored = not_counted(
                table,
                panes,
                found,
                (
                    (v.orchestrator.name, _roots(v, panes))
                    for v in orchestrators
                    if v.alive and v.orchestrator.run_id is None
                ),
                frozenset(r.agent.pid for r in runs if r.agent is not None)
                | _run_groups(conn, skip_runs),
                Scope(scope, sessions, self.settings.subagents_folders),
            )
        taken = frozenset(session for v in orchestrators for session in v.sessions)
        by_cwd = self._sessions_by_cwd(found, taken)
        views = [self._view(s, now, by_cwd.get(s.key, ())) for s in found]
        live_logs = {s.log for s in found if s.log is not None}
        self.logs.forget(live_logs)
        self.finder.forget(
            {(s.agent.pid, s.agent.create_time) for s in found if s.agent is not None}
        )
        return Survey(now, views, orchestrators, table, panes, list(self._ignored))

    def _watched_sessions(
        self, orchestrators: Sequence[OrchestratorView], panes: Sequence[Pane]
    ) -> frozenset[str]:
        """The tmux sessions of the orchestrators' panes, a closed pane's as last seen."""
        by_id = {p.pane_id: p for p in panes}
        registered = {v.orchestrator.id for v in orchestrators}
        for view in orchestrators:
            pane = by_id.get(view.pane) if view.pane and view.tmux is self.tmux else None
            if pane is not None:
                self._orch_sessions[view.orchestrator.id] = pane.session
        self._orch_sessions = {k: s for k, s in self._orch_sessions.items() if k in registered}
        return frozenset(self._orch_sessions.values())

    def _ended_runs(self, conn: sqlite3.Connection, running: Sequence[Subagent]) -> list[Subagent]:
        """Runs seen running that are no longer: ``ended`` with their stop reason."""
        now_running = {s.key for s in running}
        for sub in running:
            self._runs[sub.key] = sub
        out: list[Subagent] = []
        for key, sub in list(self._runs.items()):
            if key in now_running or sub.run_id is None:
                continue
            if sub.stop_reason is None:
                try:
                    row = get_run(conn, sub.run_id)
                except TetherError:
                    continue
                reason = row.stop_reason or row.status
                status = row.agent_exit_status
                sub = replace(
                    sub,
                    running=False,
                    agent=None,
                    stop_reason=reason,
                    exit_status=status if status is not None and status >= 0 else None,
                    signal=-status if status is not None and status < 0 else None,
                )
                self._runs[key] = sub
            out.append(sub)
        return out

    def _argv(self, pid: int, created: float) -> tuple[str, ...]:
        return self.inspector.argv(pid, created)

    def _process_key(self, pid: int, created: float) -> str | None:
        """The gate's context key for this process (cached per process)."""
        if (pid, created) not in self._keys:
            if len(self._keys) > 10_000:
                self._keys.clear()
            self._keys[(pid, created)] = gate_process_key(pid)
        return self._keys[(pid, created)]

    def _own_sessions(self, sub: Subagent) -> list[str]:
        """The sessions its record or its log names (the log's state is cached)."""
        state = self.logs.read(sub.log) if sub.log is not None else None
        return [*sub.sessions, *(state.session_ids if state is not None else ())]

    def _sessions_by_cwd(
        self, found: Sequence[Subagent], taken: frozenset[str]
    ) -> dict[str, tuple[str, ...]]:
        """Gate sessions of pane subagents whose log names none: by the folder they work in.

        Only where one running subagent works in that folder, only sessions with
        events since its agent started, never an orchestrator's session.
        """
        running = [s for s in found if s.running and s.cwd]
        count: dict[str, int] = {}
        for sub in running:
            assert sub.cwd is not None
            count[sub.cwd] = count.get(sub.cwd, 0) + 1
        unnamed = [
            s
            for s in running
            if s.kind == "pane"
            and s.agent is not None
            and count[s.cwd or ""] == 1
            and not self._own_sessions(s)
        ]
        if not unnamed:
            return {}
        since = min(s.agent.create_time for s in unnamed if s.agent is not None)
        seen = self.gate.sessions_by_cwd({s.cwd or "" for s in unnamed}, since)
        linked: dict[str, tuple[str, ...]] = {}
        for sub in unnamed:
            assert sub.agent is not None
            sessions = seen.get(sub.cwd or "", {})
            mine = sorted(
                (last, session)
                for session, last in sessions.items()
                if last >= sub.agent.create_time and session not in taken
            )
            if mine:
                linked[sub.key] = tuple(session for _, session in reversed(mine))
        return linked

    def _view(self, sub: Subagent, now: float, by_cwd: Sequence[str] = ()) -> SubagentView:
        if not sub.running:
            return SubagentView(sub, None)
        state = self.logs.read(sub.log) if sub.log is not None else None
        sessions = list(sub.sessions)
        if state is not None:
            sessions += state.session_ids
        sessions += by_cwd
        if sub.agent is not None:
            key = self._process_key(sub.agent.pid, sub.agent.create_time)
            if key is not None:
                sessions.append(key)
        events = self.gate.recent(sessions, limit=20)
        open_call = state.open_call if state is not None else None
        agent = sub.agent
        argv = self._argv(agent.pid, agent.create_time) if agent is not None else ()
        wait = wait_state(
            open_call,
            events,
            now,
            self.settings.confirm_after,
            lambda tool: agent is not None and asks_permission(agent.name, argv, tool),
        )
        return SubagentView(sub, wait)

    def _orchestrator(
        self,
        orch: Orchestrator,
        table: ProcessTable,
        panes: Sequence[Pane],
        endpoints: Sequence[Endpoint],
    ) -> OrchestratorView:
        tmux: Tmux | None = None
        pane_id: str | None = None
        agent: AgentProcess | None = None
        gone: str | None = None
        if orch.tmux_pane is not None:
            # a pane registration: orch.pid is the pane's first process (its identity)
            tmux = self.tmux_for(orch.tmux_socket)
            own = panes if tmux is self.tmux else tmux.list_panes()
            pane = next((p for p in own if p.pane_id == orch.tmux_pane), None)
            if pane is None or pane.dead:
                gone = f"pane {orch.tmux_pane} is gone"
            elif not same_process(orch.pid, orch.pid_start_time, pane.pane_pid, table):
                gone = (
                    f"pane {orch.tmux_pane} now runs another process (pid {pane.pane_pid}, "
                    f"registered: pid {orch.pid}); was its tmux server restarted?"
                )
            else:
                pane_id = pane.pane_id
                agent = table.find_agent(pane.pane_pid)
        elif orch.pid is not None:
            if not table.alive(orch.pid):
                gone = f"process {orch.pid} has ended"
            elif not same_process(orch.pid, orch.pid_start_time, orch.pid, table):
                gone = f"process {orch.pid} has ended (its pid now belongs to another process)"
            else:
                agent = table.agent(orch.pid) or table.find_agent(orch.pid)
                above = set(table.ancestors(orch.pid)) | {orch.pid}
                pane = next((p for p in panes if p.pane_pid in above), None)
                if pane is not None:
                    tmux, pane_id = self.tmux, pane.pane_id
        alive = gone is None
        mine = tuple(e for e in endpoints if _belongs(e, orch, pane_id, panes, table))
        sessions = list(orch.sessions)
        sessions += [e.session_id for e in mine if e.session_id]
        for pid in (orch.pid, agent.pid if agent else None):
            if pid is not None:
                key = self._process_key(pid, table.created.get(pid, 0.0))
                if key is not None:
                    sessions.append(key)
        log = None
        if agent is not None and orch.log_path is None:
            log = self.finder.find(agent, self.finder.cwd(agent))
        return OrchestratorView(
            orch, alive, pane_id, tmux, agent, mine, tuple(dict.fromkeys(sessions)), log, gone
        )


def _roots(view: OrchestratorView, panes: Sequence[Pane]) -> tuple[int, ...]:
    """The pids at the root of an orchestrator's own tree: its process, its pane's shell."""
    pids = [p for p in (view.orchestrator.pid, view.agent.pid if view.agent else None) if p]
    pids += [p.pane_pid for p in panes if view.pane is not None and p.pane_id == view.pane]
    return tuple(pids)


def _run_groups(conn: sqlite3.Connection, runs: frozenset[str]) -> frozenset[int]:
    """The process groups of the orchestrators' own ``tether run`` runs."""
    groups: set[int] = set()
    for run_id in runs:
        try:
            row = get_run(conn, run_id)
        except TetherError:
            continue
        if row.agent_pgid is not None:
            groups.add(row.agent_pgid)
    return frozenset(groups)


def same_process(
    registered: int | None, start_time: float | None, pid: int, table: ProcessTable
) -> bool:
    """``pid`` is the registered process: same pid, same start time (when both are known).

    A registration without a pid (made before panes kept one) cannot be checked
    and is trusted.
    """
    if registered is None:
        return True
    if pid != registered or not table.alive(pid):
        return False
    if start_time is None:
        return True
    return abs(table.created.get(pid, 0.0) - start_time) < 1.0


def _belongs(
    endpoint: Endpoint,
    orch: Orchestrator,
    pane_id: str | None,
    panes: Sequence[Pane],
    table: ProcessTable,
) -> bool:
    if endpoint.session_id is not None and endpoint.session_id in orch.sessions:
        return True
    target = endpoint.agent_pid or endpoint.pid
    if orch.pid is not None and table.is_below(target, orch.pid):
        return True
    if pane_id is not None:
        if endpoint.tmux_pane == pane_id and orch.tmux_socket is None:
            return True
        pane = next((p for p in panes if p.pane_id == pane_id), None)
        if pane is not None and table.is_below(target, pane.pane_pid):
            return True
    return False


def find_caller(
    orchestrators: Sequence[Orchestrator],
    table: ProcessTable,
    panes: Sequence[Pane],
    *,
    pid: int,
    tmux_pane: str | None,
) -> Orchestrator | None:
    """The orchestrator a command was called from: by its pane or its process tree.

    ``tether subagents wait`` runs as a tool call of the orchestrator's agent,
    so it inherits ``TMUX_PANE`` and sits below the orchestrator's process. A
    call from anywhere else (a subagent's pane, another terminal) is nobody's
    activity, even with only one orchestrator registered.
    """
    if tmux_pane is not None:
        for orch in orchestrators:
            if orch.tmux_pane == tmux_pane:
                return orch
    above = set(table.ancestors(pid)) | {pid}
    for orch in orchestrators:
        if orch.pid is not None and orch.pid in above:
            return orch
        if orch.tmux_pane is not None:
            pane = next((p for p in panes if p.pane_id == orch.tmux_pane), None)
            if pane is not None and pane.pane_pid in above:
                return orch
    return None  # not from an orchestrator's own pane or tree: no orchestrator's activity
