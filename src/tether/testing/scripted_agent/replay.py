"""``--replay FILE``: print a recorded stream's lines exactly as they are.

``--step-delay`` is slept before each line that begins a new model step in the
format given by ``--format`` (Claude Code: an ``assistant`` line with a new
``message.id``; Codex: ``item.started``; Pi: ``turn_start``; Copilot:
``assistant.turn_start``), so a replay is paced like the live CLI. A last line
without a newline is printed without one.
"""

from __future__ import annotations

import time

from tether.testing.scripted_agent.emit import LineWriter
from tether.testing.scripted_agent.options import Options
from tether.testing.scripted_agent.render import step_detector


def replay(opts: Options) -> int:
    assert opts.replay is not None
    starts_step = step_detector(opts.format)
    out = LineWriter()
    with opts.replay.open("rb") as fh:
        for line in fh:
            if opts.step_delay and starts_step(line):
                time.sleep(opts.step_delay)
            out.raw(line)
    return opts.exit_code if opts.exit_code is not None else 0
