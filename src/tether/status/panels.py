"""The records the status panels are made of; ``collect`` turns them into the status object.

Each ``as_dict`` is the panel's part of ``tether status --json`` (keys and their
order as docs/reference/status.md lists them); the dashboard serves the same
object and the text view draws it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tether.fleet.panel import FleetPanel
    from tether.status.board import BoardPanel


@dataclass(frozen=True)
class RunFigures:
    """A run's figures against its limits (shared by status and the dashboard)."""

    iterations: int
    iteration_limit: int | None
    tool_calls: int
    tool_call_limit: int | None
    tokens: int | None  # input, output and cache tokens; None: none reported
    cost_usd: float | None
    elapsed_seconds: float | None
    timeout_seconds: float | None
    # the runs table keeps no token or cost limit yet: None
    token_limit: int | None = None
    cost_limit_usd: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "iterations": self.iterations,
            "iteration_limit": self.iteration_limit,
            "tool_calls": self.tool_calls,
            "tool_call_limit": self.tool_call_limit,
            "tokens": self.tokens,
            "token_limit": self.token_limit,
            "cost_usd": self.cost_usd,
            "cost_limit_usd": self.cost_limit_usd,
            "elapsed_seconds": self.elapsed_seconds,
            "timeout_seconds": self.timeout_seconds,
        }


@dataclass(frozen=True)
class RunningRun:
    id: str
    unit: str | None
    profile: str
    harness: str
    session_id: str | None  # the harness's own when it said one, else tether's
    figures: RunFigures
    last_event_age_seconds: float | None
    supervisor_alive: bool
    run_dir: str
    sandbox: str | None  # "bubblewrap", "off: <why>", None: from before sandboxes

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "unit": self.unit,
            "profile": self.profile,
            "harness": self.harness,
            "session_id": self.session_id,
            **self.figures.as_dict(),
            "last_event_age_seconds": self.last_event_age_seconds,
            "supervisor_alive": self.supervisor_alive,
            "run_dir": self.run_dir,
            "sandbox": self.sandbox,
        }


@dataclass(frozen=True)
class EndedRun:
    id: str
    status: str
    stop_reason: str | None
    exit_code: int | None
    unit: str | None
    harness: str
    ended_at: str | None
    report: str | None  # report.md, when the run left one
    sandbox: str | None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class GateSession:
    session_id: str
    calls_used: int
    call_budget: int
    locked: bool
    over: bool
    state: str  # near, over, locked, ended (its run ended)
    run_id: str | None
    harness: str | None
    updated_at: str | None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class GatePanel:
    near_budget: float
    sessions: list[GateSession]
    error: str | None = None  # the gate database could not be read

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "near_budget": self.near_budget,
            "sessions": [s.as_dict() for s in self.sessions],
        }
        if self.error is not None:
            out["error"] = self.error
        return out


@dataclass(frozen=True)
class IngestPanel:
    wiki: str | None  # None: no wiki configured
    quarantine: int = 0
    waiting: int = 0
    claimed: int = 0
    done: int = 0
    error: str | None = None  # the queue could not be read

    def as_dict(self) -> dict[str, Any]:
        if self.wiki is None:
            return {"wiki": None}
        if self.error is not None:
            return {"wiki": self.wiki, "error": self.error}
        return {
            "wiki": self.wiki,
            "quarantine": self.quarantine,
            "waiting": self.waiting,
            "claimed": self.claimed,
            "done": self.done,
        }


@dataclass(frozen=True)
class OpenRoom:
    room: str
    pid: int | None
    question: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class LastTick:
    at: str
    age_seconds: float
    signal: str
    line: str
    exit_code: int | None
    meaning: str | None  # the line's words after " — "
    dry_run: bool

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class GuardLine:
    result: str
    at: str
    unavailable: list[str]
    person_items: list[str]

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class LoopLine:
    """One board's loop: its last tick, its guard, what waited for a person after it."""

    board: str
    last_tick: LastTick | None
    guard: GuardLine | None
    waiting_count: int
    waiting_first: list[str]

    def as_dict(self) -> dict[str, Any]:
        return {
            "board": self.board,
            "last_tick": None if self.last_tick is None else self.last_tick.as_dict(),
            "guard": None if self.guard is None else self.guard.as_dict(),
            "user_bundle": {"count": self.waiting_count, "first": self.waiting_first},
        }


@dataclass(frozen=True)
class OrchestratorLine:
    """A registered orchestrator; once surveyed, ``active``/``idle`` or ``gone`` (with why)."""

    id: int
    name: str
    harness: str | None
    state: str  # registered (not surveyed), active, idle, gone
    why: str | None = None  # gone: why
    idle_seconds: float | None = None
    activity: str | None = None  # active/idle: what its last activity was read from

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "name": self.name, "harness": self.harness}
        out["state"] = self.state
        if self.state == "gone":
            out.update(why=self.why, idle_seconds=None)
        elif self.state != "registered":
            out.update(idle_seconds=self.idle_seconds, activity=self.activity)
        return out


@dataclass(frozen=True)
class WakeLine:
    at: str
    reason: str
    subagent: str | None
    outcome: str
    message: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class WatchPanel:
    orchestrators: list[OrchestratorLine]
    # the survey's subagents, a few keys of the watch's own document (`tether watch --json`)
    subagents: list[dict[str, Any]]
    wakes: list[WakeLine]

    def as_dict(self) -> dict[str, Any]:
        return {
            "orchestrators": [o.as_dict() for o in self.orchestrators],
            "subagents": self.subagents,
            "wakes": [w.as_dict() for w in self.wakes],
        }


SCHEMA = 1  # the status object's version (docs/reference/status.md)


@dataclass(frozen=True)
class Status:
    """Everything ``tether status`` shows; ``as_dict`` is the status object."""

    generated_at: str
    home: str
    running: list[RunningRun]
    loops: list[LoopLine]
    board: BoardPanel | None  # None: the project has no board folder
    watch: WatchPanel
    gate: GatePanel
    ingest: IngestPanel
    rooms: list[OpenRoom]
    ended: list[EndedRun]
    # the fleet's own panel (tether.fleet.status), None: this home knows no fleet
    fleet: FleetPanel | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "generated_at": self.generated_at,
            "home": self.home,
            "running": [r.as_dict() for r in self.running],
            "loops": [b.as_dict() for b in self.loops],
            "board": None if self.board is None else self.board.as_dict(),
            "watch": self.watch.as_dict(),
            "gate": self.gate.as_dict(),
            "ingest": self.ingest.as_dict(),
            "room": {"open": [r.as_dict() for r in self.rooms]},
            "ended": [r.as_dict() for r in self.ended],
            "fleet": None if self.fleet is None else self.fleet.as_dict(),
        }
