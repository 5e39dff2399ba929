"""The records the status panels are made of; ``collect`` turns them into the status object.

Each ``as_dict`` is the panel's part of ``tether status --json`` (keys and their
order as docs/reference/status.md lists them); the dashboard serves the same
object and the text view draws it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


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

    def as_dict(self) -> dict[str, Any]:
        # the runs table keeps no token or cost limit: the document says so with null
        return {
            "iterations": self.iterations,
            "iteration_limit": self.iteration_limit,
            "tool_calls": self.tool_calls,
            "tool_call_limit": self.tool_call_limit,
            "tokens": self.tokens,
            "token_limit": None,
            "cost_usd": self.cost_usd,
            "cost_limit_usd": None,
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
