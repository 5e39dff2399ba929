"""A real executable coding agent that fakes only the model.

Run it as ``python -m tether.harnesses.scripted [options] PROMPT`` (or
``python -m tether.testing.scripted_agent``). It prints the JSONL event stream
of Claude Code, Codex, Copilot or Pi exactly as those CLIs print it, executes
its tool calls for real, honours Claude Code style ``PreToolUse`` and
``PostToolBatch`` hooks, and can be made slow, stuck, deaf to SIGTERM or
failing. See docs/reference/scripted-harness.md.

Modules: ``options`` (command line), ``plan`` (the fake model's steps),
``agent`` (the loop), ``hooks`` (Claude Code hooks), ``emit`` (output and
files), ``render`` (the format contract), one renderer per format
(``claude_code``, ``codex``, ``copilot``, ``pi``) and ``replay``.
"""

from __future__ import annotations

__all__ = ["main"]


def main() -> int:
    from tether.testing.scripted_agent.agent import main as run

    return run()
