"""Finding the subagents: by what runs in the tmux panes, and ``tether run`` runs.

Which panes hold subagents is ``[watch] subagents_scope`` (``scope``): by
default every pane of an orchestrator's own tmux session (all its windows)
with a live agent process in its tree, other than the orchestrator; ``server``
takes every pane of the tmux server, ``folders`` only the panes under
``subagents_folders``. In every scope a pane whose current path lies under one
of the ``subagents_folders`` is a subagent's (listed even before its agent
starts), and so is a pane or a process registered with ``tether watch
add-subagent``. A pane *runs* while a live agent process sits below the pane's
shell (``proctree``). A run started by ``tether run`` is a subagent while its
record says ``running`` and its agent's process group is alive.

Each subagent comes with the log to read for an open tool call: a run's
``events.jsonl``; for a pane, the file the agent's stdout goes to when it is a
regular file, else the harness's own session file for the agent's working
directory (Claude Code: ``~/.claude/projects/<cwd>/``, Pi:
``~/.pi/agent/sessions/--<cwd>--/``, newest file; Vibe: the journal of the
newest session under ``$VIBE_HOME/logs/session/unified/`` whose ``meta.json``
names that directory).
"""

from __future__ import annotations

import json
import re
import sqlite3
import stat
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Literal

from tether.runs.guardian import group_running
from tether.runs.liveness import supervisor_alive
from tether.store.runs import running_runs
from tether.watch.proctree import AgentProcess, ProcessTable
from tether.watch.tmux import Pane

SubagentKind = Literal["pane", "run", "process"]


@dataclass(frozen=True)
class Subagent:
    key: str  # "pane:%4", "run:r-…" or "pid:1234"
    kind: SubagentKind
    label: str
    running: bool
    agent: AgentProcess | None = None
    cwd: str | None = None
    pane: Pane | None = None
    run_id: str | None = None
    log: Path | None = None
    sessions: tuple[str, ...] = field(default=())
    starting: bool = False  # no agent yet, but something runs in its pane: it is coming
    stop_reason: str | None = None  # a run that ended: why it stopped
    # how its agent ended, where that can be known: its exit status, or the signal
    # that ended it (a run's record; a dead pane tmux keeps)
    exit_status: int | None = None
    signal: int | None = None

    @property
    def killed(self) -> bool:
        return self.signal is not None

    def end_text(self) -> str:
        """How it ended, as far as can be known: ``exit 0``, ``SIGKILL``, or that it is not."""
        if self.signal is not None:
            return signal_name(self.signal)
        if self.exit_status is not None:
            return f"exit {self.exit_status}"
        return "its exit status is not known"

    def ended_words(self) -> str:
        """Why and how it ended: a run's stop reason, then ``exit N`` or the signal."""
        return "; ".join(p for p in (self.stop_reason, self.end_text()) if p)


def signal_name(number: int) -> str:
    """``SIGKILL`` for 9; ``signal 64`` for a number with no name."""
    import signal as signals

    try:
        return signals.Signals(number).name
    except ValueError:
        return f"signal {number}"


@lru_cache(maxsize=4096)
def _real(path: str) -> str:
    """The resolved path (cached: every cycle asks again for the same pane paths)."""
    return str(Path(path).expanduser().resolve())


def under(path: str, folders: Iterable[str]) -> str | None:
    """``path`` relative to the first folder it lies in ("." for the folder itself)."""
    real = _real(path)
    for folder in folders:
        root = _real(folder)
        if real == root:
            return "."
        if real.startswith(root.rstrip("/") + "/"):
            return real[len(root.rstrip("/")) + 1 :]
    return None


class LogFinder:
    """Where a pane's agent writes its log; cached per process."""

    def __init__(self) -> None:
        self._stdout: dict[tuple[int, float], Path | None] = {}
        self._env: dict[tuple[int, float], dict[str, str]] = {}
        self._cwd: dict[tuple[int, float], str | None] = {}

    def cwd(self, agent: AgentProcess) -> str | None:
        """The agent's working directory when first seen (agents do not wander off)."""
        key = (agent.pid, agent.create_time)
        if key not in self._cwd:
            self._cwd[key] = agent_cwd(agent, None)
        return self._cwd[key]

    def find(self, agent: AgentProcess, cwd: str | None) -> Path | None:
        key = (agent.pid, agent.create_time)
        if key not in self._stdout:
            self._stdout[key] = _stdout_file(agent.pid)
        found = self._stdout[key]
        if found is not None:
            return found
        if cwd is None:
            return None
        folder = self._session_folder(agent, cwd)
        return None if folder is None else _newest_jsonl(folder)

    def _environ(self, agent: AgentProcess) -> dict[str, str]:
        key = (agent.pid, agent.create_time)
        if key not in self._env:
            import psutil

            try:
                self._env[key] = dict(psutil.Process(agent.pid).environ())
            except (psutil.Error, OSError):
                self._env[key] = {}
        return self._env[key]

    def _session_folder(self, agent: AgentProcess, cwd: str) -> Path | None:
        env = self._environ(agent)
        home = Path(env["HOME"]) if env.get("HOME") else Path.home()
        if agent.name == "claude":
            config = env.get("CLAUDE_CONFIG_DIR")
            base = Path(config) if config else home / ".claude"
            return base / "projects" / re.sub(r"[^A-Za-z0-9]", "-", cwd)
        if agent.name == "pi":
            base = (
                Path(env["PI_CODING_AGENT_DIR"])
                if env.get("PI_CODING_AGENT_DIR")
                else home / ".pi" / "agent"
            )
            safe = "--" + re.sub(r"[/\\:]", "-", re.sub(r"^[/\\]", "", cwd)) + "--"
            return base / "sessions" / safe
        if agent.name == "vibe":
            base = Path(env["VIBE_HOME"]) if env.get("VIBE_HOME") else home / ".vibe"
            return _vibe_journal(base / "logs" / "session" / "unified", cwd)
        return None

    def forget(self, live: set[tuple[int, float]]) -> None:
        self._stdout = {k: v for k, v in self._stdout.items() if k in live}
        self._env = {k: v for k, v in self._env.items() if k in live}
        self._cwd = {k: v for k, v in self._cwd.items() if k in live}


def _stdout_file(pid: int) -> Path | None:
    try:
        fd = Path(f"/proc/{pid}/fd/1")
        target = str(fd.readlink())
        if not target.startswith("/"):
            return None
        if stat.S_ISREG(fd.stat().st_mode):
            return Path(target)
    except OSError:
        return None
    return None


def _newest_jsonl(folder: Path) -> Path | None:
    try:
        files = [(p.stat().st_mtime, p) for p in folder.glob("*.jsonl")]
    except OSError:
        return None
    return max(files)[1] if files else None


def _vibe_journal(sessions: Path, cwd: str) -> Path | None:
    """The journal folder of Vibe's newest session that runs in ``cwd``.

    Vibe keeps sessions by id, not by folder; each ``meta.json`` names the
    session's working directory.
    """
    try:
        metas = sorted(((p.stat().st_mtime, p) for p in sessions.glob("*/meta.json")), reverse=True)
    except OSError:
        return None
    for _, meta in metas:
        try:
            data = json.loads(meta.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        environment = data.get("environment") if isinstance(data, dict) else None
        where = environment.get("working_directory") if isinstance(environment, dict) else None
        if where == cwd:
            return meta.parent / "journal"
    return None


def agent_cwd(agent: AgentProcess | None, fallback: str | None) -> str | None:
    if agent is None:
        return fallback
    import psutil

    try:
        return psutil.Process(agent.pid).cwd()
    except (psutil.Error, OSError):
        return fallback


def _pane_label(where: str | None, cwd: str | None, pane: Pane) -> str:
    if where is not None:
        return f"{where} (pane {pane.pane_id})"
    name = Path(cwd).name if cwd else ""
    return f"{name or cwd or pane.label} (pane {pane.pane_id})"


def _no_pane(pane: Pane) -> bool:
    return False


@dataclass(frozen=True)
class PaneChoice:
    """Which tmux panes are subagents."""

    folders: Sequence[str] = ()  # a pane under one is listed, its agent running or not
    added: frozenset[str] = frozenset()  # panes added by hand: listed too
    by_agent: Callable[[Pane], bool] = _no_pane  # the scope: listed while an agent runs there
    skip_panes: frozenset[str] = frozenset()  # the orchestrators' own panes
    skip_pids: frozenset[int] = frozenset()  # the orchestrators' own processes


def pane_subagents(
    panes: Iterable[Pane], table: ProcessTable, finder: LogFinder, choice: PaneChoice
) -> list[Subagent]:
    """The panes that are subagents.

    A pane under ``choice.folders`` or in ``choice.added`` is listed whether or not
    its agent runs yet; a pane for which ``choice.by_agent`` says yes (the scope)
    only while a live agent process is in its tree.
    """
    folders, added, by_agent = choice.folders, choice.added, choice.by_agent
    skip_panes, skip_pids = choice.skip_panes, choice.skip_pids
    found: list[Subagent] = []
    for pane in panes:
        if pane.pane_id in skip_panes:
            continue
        where = under(pane.current_path, folders) if folders else None
        listed = where is not None or pane.pane_id in added
        if not listed and not by_agent(pane):
            continue
        agent = None if pane.dead else table.find_agent(pane.pane_pid)
        if agent is not None and agent.pid in skip_pids:
            continue
        if agent is None and not listed:
            continue
        cwd = (finder.cwd(agent) if agent is not None else None) or pane.current_path
        log = finder.find(agent, cwd) if agent is not None else None
        found.append(
            Subagent(
                key=f"pane:{pane.pane_id}",
                kind="pane",
                label=_pane_label(where, cwd if agent is not None else None, pane),
                running=agent is not None,
                agent=agent,
                cwd=cwd,
                pane=pane,
                log=log,
                exit_status=pane.dead_status if pane.dead else None,
                signal=pane.dead_signal if pane.dead else None,
            )
        )
    return found


def process_subagents(
    pids: Iterable[tuple[int, float | None]],
    table: ProcessTable,
    finder: LogFinder,
    skip_pids: frozenset[int] = frozenset(),
) -> list[Subagent]:
    """Processes registered as subagents (``tether watch add-subagent --pid N``)."""
    found: list[Subagent] = []
    for pid, start_time in pids:
        if pid in skip_pids:
            continue
        same = table.alive(pid) and (
            start_time is None or abs(table.created.get(pid, 0.0) - start_time) < 1.0
        )
        agent = (table.agent(pid) or table.find_agent(pid)) if same else None
        cwd = finder.cwd(agent) if agent is not None else None
        name = Path(cwd).name if cwd else ""
        found.append(
            Subagent(
                key=f"pid:{pid}",
                kind="process",
                label=f"{name} (pid {pid})" if name else f"pid {pid}",
                running=agent is not None,
                agent=agent,
                cwd=cwd,
                log=finder.find(agent, cwd) if agent is not None else None,
            )
        )
    return found


def run_log(harness: str, run_dir: Path, harness_session_id: str | None) -> Path:
    """The log of a ``tether run`` run that shows a tool call still open.

    The run's ``events.jsonl`` (the harness's stream), except for Vibe, whose
    stream prints a tool call only once it has finished: there the session
    journal, found through the run's own ``VIBE_HOME`` (``vibe-home`` in the run
    folder, whose ``logs`` is the user's), once the stream has named the session.
    """
    events = run_dir / "events.jsonl"
    if harness != "vibe" or not harness_session_id:
        return events
    from tether.harnesses import get_harness

    home = {"VIBE_HOME": str(run_dir / "vibe-home")}
    journal = get_harness("vibe").session_file(harness_session_id, home)
    return journal if journal is not None else events


def run_subagents(
    conn: sqlite3.Connection,
    table: ProcessTable,
    skip_runs: frozenset[str] = frozenset(),
) -> list[Subagent]:
    found: list[Subagent] = []
    for row in running_runs(conn):
        if row.id in skip_runs:
            continue
        alive = row.agent_pgid is not None and group_running(row.agent_pgid)
        agent = None
        if alive and row.agent_pgid is not None:
            # a sandboxed run's group is its sandbox: the agent is below it
            agent = (
                table.agent(row.agent_pgid)
                or table.agent_in_group(row.agent_pgid)
                or table.find_agent(row.agent_pgid, include_root=False)
            )
        # A run whose supervisor lives but has not started its agent yet is coming,
        # not over: reported as ended, it would look like news and end a wait early.
        starting = row.agent_pgid is None and supervisor_alive(row)
        label = f"run {row.id}" + (f" ({row.unit})" if row.unit else "")
        sessions = tuple(s for s in (row.session_id, row.harness_session_id) if s)
        found.append(
            Subagent(
                key=f"run:{row.id}",
                kind="run",
                label=label,
                running=alive,
                starting=starting,
                agent=agent,
                cwd=row.cwd,
                run_id=row.id,
                log=run_log(row.harness, Path(row.run_dir), row.harness_session_id),
                sessions=sessions,
            )
        )
    return found
