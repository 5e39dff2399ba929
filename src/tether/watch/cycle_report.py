"""What a watch cycle reports, and the JSON shape of the subagents it saw.

``subagents_dict`` is what ``subagents list --json`` (and its MCP tool) prints;
``subagent_dict`` is one subagent in it, also used by ``watch status``, the
status view and ``subagents wait``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tether.watch.registry import WakeRecord
from tether.watch.subagents import signal_name
from tether.watch.survey import Survey
from tether.watch.wake import SubagentView


@dataclass
class Decision:
    orchestrator_id: int | None
    name: str
    action: str  # "woken", "human-only", or why not: "active", "busy", "rate-limited", …
    idle_seconds: float | None = None
    activity_source: str | None = None
    wake_id: int | None = None
    note: str | None = None  # e.g. why the orchestrator is gone

    def as_dict(self) -> dict[str, Any]:
        return {
            "orchestrator_id": self.orchestrator_id,
            "name": self.name,
            "action": self.action,
            "idle_seconds": None if self.idle_seconds is None else round(self.idle_seconds, 1),
            "activity_source": self.activity_source,
            "wake_id": self.wake_id,
            "note": self.note,
        }


@dataclass
class CycleReport:
    at: str
    survey: Survey
    decisions: list[Decision] = field(default_factory=list)
    wakes: list[WakeRecord] = field(default_factory=list)

    @property
    def running(self) -> int:
        return len(self.survey.running)

    def as_dict(self) -> dict[str, Any]:
        return {
            "at": self.at,
            "running": self.running,
            "subagents": [subagent_dict(v) for v in self.survey.subagents],
            "orchestrators": [d.as_dict() for d in self.decisions],
            "wakes": [w.as_dict() for w in self.wakes],
            "not_counted": [n.as_dict() for n in self.survey.not_counted],
        }


def subagents_dict(survey: Survey) -> dict[str, Any]:
    """What ``subagents list --json`` (and its MCP tool) prints: the subagents, how many run,
    and the agent processes seen but not counted, each with its reason."""
    return {
        "running": len(survey.running),
        "subagents": [subagent_dict(v) for v in survey.subagents],
        "not_counted": [n.as_dict() for n in survey.not_counted],
    }


def subagent_dict(view: SubagentView) -> dict[str, Any]:
    sub, wait = view.subagent, view.wait
    return {
        "key": sub.key,
        "kind": sub.kind,
        "label": sub.label,
        "state": view.state,
        "running": sub.running,
        "agent": None if sub.agent is None else {"pid": sub.agent.pid, "name": sub.agent.name},
        "pane": None if sub.pane is None else sub.pane.pane_id,
        "pane_command": None if sub.pane is None else sub.pane.current_command,
        "run_id": sub.run_id,
        "stop_reason": sub.stop_reason,
        "exit_status": sub.exit_status,
        "signal": None if sub.signal is None else signal_name(sub.signal),
        "cwd": sub.cwd,
        "log": None if sub.log is None else str(sub.log),
        "wait": None
        if wait is None
        else {
            "kind": wait.kind,
            "tool": wait.tool,
            "input": wait.input,
            "call_id": wait.call_id,
            "since": wait.since,
            "signal": wait.signal,
        },
    }
