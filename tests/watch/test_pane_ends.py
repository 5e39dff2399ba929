"""A pane subagent's end waits for tmux's word on how it ended, then is said with it."""

from __future__ import annotations

import time
from dataclasses import replace

from tether.watch.pane_ends import PaneEnds
from tether.watch.proctree import AgentProcess
from tether.watch.subagents import Subagent
from tether.watch.tmux import Pane

PANE = Pane("%4", 4242, "/work", "claude", "lab", 1, dead=False)
RUNNING = Subagent(
    key="pane:%4",
    kind="pane",
    label="work (pane %4)",
    running=True,
    agent=AgentProcess(4242, "claude", 1000.0),
    cwd="/work",
    pane=PANE,
)


def test_a_dead_pane_without_its_status_waits_for_it() -> None:
    ends = PaneEnds()
    assert ends.ended([RUNNING], [PANE]) == []  # listed: it runs
    # tmux marks the pane dead before it has reaped the process: no status yet
    dead = replace(PANE, dead=True)
    assert not dead.end_known
    (waiting,) = ends.ended([], [dead])
    assert waiting is RUNNING  # as last seen: the end is not told without its status
    (ended,) = ends.ended([], [replace(dead, dead_status=3)])
    assert not ended.running and ended.end_text() == "exit 3"
    assert ends.ended([], [replace(dead, dead_signal=9)])[0].end_text() == "SIGKILL"


def test_a_pane_whose_agent_runs_again_waits_afresh_for_its_next_end() -> None:
    ends = PaneEnds(dead_pane_grace=0.2)
    dead = replace(PANE, dead=True)
    ends.ended([RUNNING], [PANE])
    assert ends.ended([], [dead]) == [RUNNING]  # waits for tmux's word
    time.sleep(0.3)  # past the wait: said without it
    assert ends.ended([], [dead])[0].end_text() == "its exit status is not known"
    ends.ended([RUNNING], [PANE])  # respawned: runs again
    assert ends.ended([], [dead]) == [RUNNING]  # its next end waits again
