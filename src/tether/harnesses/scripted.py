"""The scripted harness: a real agent process that fakes only the model.

``python -m tether.harnesses.scripted [options] PROMPT`` runs the agent in
:mod:`tether.testing.scripted_agent`; it prints the stream of Claude Code
(default), Codex, Copilot or Pi, chosen with ``--format``. This adapter builds
that command and parses by delegating to the adapter of the format: the plain
instance reads Claude Code; :meth:`ScriptedHarness.bind` returns one
specialised for the ``--format`` in a run's extra arguments (Codex: iterations
come from the rollout file the agent writes). See
docs/reference/scripted-harness.md.

This module imports nothing heavy at the top, so the agent starts fast.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    from tether.events.model import AnyEvent
    from tether.harnesses.base import Harness, IterationSource, RunSpec

MODULE = "tether.harnesses.scripted"
DEFAULT_FORMAT = "claude-code"


def format_of(args: Sequence[str]) -> str:
    """The ``--format`` among the agent's options (the last one wins, as argparse does)."""
    fmt = DEFAULT_FORMAT
    it = iter(args)
    for arg in it:
        if arg == "--":
            break
        if arg == "--format":
            fmt = next(it, fmt)
        elif arg.startswith("--format="):
            fmt = arg.partition("=")[2]
    return fmt


class ScriptedHarness:
    name: ClassVar[str] = "scripted"
    executable: ClassVar[str] = sys.executable
    iteration_source: ClassVar[IterationSource] = "stream"
    accepts_session_id: ClassVar[bool] = True
    has_turn_cap: ClassVar[bool] = True
    # it replays whatever usage its transcript holds
    reports_cost: ClassVar[bool] = True
    # The stream format this adapter reads (a registry name of its real harness).
    format: ClassVar[str] = DEFAULT_FORMAT

    def __init__(self) -> None:
        self._inner: Harness | None = None

    @property
    def inner(self) -> Harness:
        """The adapter of the real harness whose format this one reads."""
        if self._inner is None:
            from tether.harnesses import get_harness

            self._inner = get_harness(self.format)
        return self._inner

    def build_command(self, spec: RunSpec) -> list[str]:
        argv = [self.executable, "-m", MODULE, *spec.extra_args]
        if spec.model:
            argv += ["--model", spec.model]
        if spec.session_id:
            argv += ["--session-id", spec.session_id]
        if spec.max_turns is not None:
            argv += ["--max-turns", str(spec.max_turns)]
        if spec.settings_path is not None:
            argv += ["--settings", str(spec.settings_path)]
        argv += ["--", spec.prompt]
        return argv

    def bind(self, spec: RunSpec) -> ScriptedHarness:
        """An adapter for the ``--format`` in ``spec.extra_args`` (default Claude Code)."""
        fmt = format_of(spec.extra_args)
        bound = BOUND.get(fmt)
        if bound is None:
            from tether.core.errors import UnknownNameError

            raise UnknownNameError("scripted harness --format", fmt, sorted(BOUND))
        adapter = bound()
        # Parse with the real adapter directly: no delegation cost per line.
        adapter.parse_line = adapter.inner.parse_line  # type: ignore[method-assign]
        return adapter

    def parse_line(self, line: bytes) -> list[AnyEvent]:
        return self.inner.parse_line(line)

    def parse_session_line(self, line: bytes) -> list[AnyEvent]:
        return self.inner.parse_session_line(line)

    def session_file(self, session_id: str, env: Mapping[str, str]) -> Path | None:
        # Only the Codex format writes the harness's own session log.
        return None


class ScriptedCodexHarness(ScriptedHarness):
    format: ClassVar[str] = "codex"
    iteration_source: ClassVar[IterationSource] = "session_file"

    def session_file(self, session_id: str, env: Mapping[str, str]) -> Path | None:
        return self.inner.session_file(session_id, env)


class ScriptedCopilotHarness(ScriptedHarness):
    format: ClassVar[str] = "copilot"


class ScriptedPiHarness(ScriptedHarness):
    format: ClassVar[str] = "pi"


BOUND: dict[str, type[ScriptedHarness]] = {
    "claude-code": ScriptedHarness,
    "codex": ScriptedCodexHarness,
    "copilot": ScriptedCopilotHarness,
    "pi": ScriptedPiHarness,
}


if __name__ == "__main__":
    from tether.testing.scripted_agent.agent import main

    sys.exit(main())
