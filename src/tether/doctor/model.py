"""What ``tether doctor`` finds, as plain typed records (``as_dict`` for ``--json``)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Verdict = Literal["enforced", "not enforced", "not installed"]


@dataclass(frozen=True)
class HookFile:
    """One place a harness reads hooks from, and whether tether's gate is in it."""

    scope: str  # "project" or "user"
    path: str
    present: bool  # the gate's entries are in the file
    current: bool  # ... as `tether hooks install` writes them today (same tether-gate)
    error: str | None = None


@dataclass(frozen=True)
class Trust:
    """What the harness itself must allow before the hooks in a place run."""

    what: str  # e.g. "codex project", "codex hook", "copilot folder", "vibe folder"
    subject: str  # the folder or hook key
    state: str  # "trusted", "untrusted", "modified", ...


@dataclass(frozen=True)
class Probe:
    """The live probe: the CLI against the scripted model, gate budget 1, two calls.

    Each call creates its own file: ``first_ran``/``second_ran`` say which calls
    were executed; ``gate_allowed``/``gate_refused`` what the gate decided.
    """

    first_ran: bool
    second_ran: bool
    gate_allowed: int
    gate_refused: int
    model_calls: int
    exit_code: int | None
    timed_out: bool
    seconds: float
    error: str | None = None
    stderr_tail: str = ""
    kept: str | None = None  # the probe's folder, when kept (--keep)

    @property
    def holds(self) -> bool:
        """Call 1 ran, the gate refused a call, and call 2 did not run."""
        return self.first_ran and not self.second_ran and self.gate_refused >= 1


@dataclass(frozen=True)
class HarnessCheck:
    """One agent CLI: where it is, its gate hooks, trust, probe, and the verdict."""

    harness: str
    verdict: Verdict
    why: str | None = None
    fix: str | None = None
    executable: str | None = None
    found_by: str = "PATH"  # "PATH" or "profile NAME"
    version: str | None = None
    hooks: list[HookFile] = field(default_factory=list)
    trust: list[Trust] = field(default_factory=list)
    probe: Probe | None = None
    notes: list[str] = field(default_factory=list)
    # the same probe inside tether's sandbox, as a run starts the CLI
    sandboxed_probe: Probe | None = None

    @property
    def line(self) -> str:
        """The one line that ends this harness's section."""
        if self.verdict != "not enforced":
            return f"{self.harness}: {self.verdict}"
        text = f"{self.harness}: not enforced: {self.why}"
        return f"{text} — fix: {self.fix}" if self.fix else text


@dataclass(frozen=True)
class DoctorReport:
    project: str
    checks: list[HarnessCheck]
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Every installed harness is enforced."""
        return all(c.verdict != "not enforced" for c in self.checks)

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["ok"] = self.ok
        for check, out in zip(self.checks, data["checks"], strict=True):
            out["line"] = check.line
        return data
