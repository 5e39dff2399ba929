"""Typing a wake into a pane submits it, also to an agent that takes a burst of keys as a paste.

A real tmux server and pane; the stand-in agent (``paste_tui.py``) reads its
terminal only every 0.3 s, so text and an Enter pressed right after it arrive
in one read and the Enter is lost in the paste, as it is in Claude Code's box.
"""

from __future__ import annotations

import sys
from pathlib import Path

from tests.watch.watch_support import HERE, TmuxLab, wait_until

PASTE_TUI = HERE / "paste_tui.py"


def _submitted(out: Path) -> list[str]:
    lines = out.read_text("utf-8").splitlines() if out.exists() else []
    return [line for line in lines if line != "<ready>"]


def test_a_typed_wake_is_submitted_once_to_an_agent_that_reads_bursts_as_pastes(
    lab: TmuxLab,
) -> None:
    out = lab.root / "submitted.txt"
    pane = lab.window(lab.root / "agent", [sys.executable, str(PASTE_TUI), str(out)])
    wait_until(lambda: out.exists() and "<ready>" in out.read_text("utf-8"), what="the agent")
    lab.tmux.send_text(pane, "[tether watch] first wake")
    lab.tmux.send_text(pane, "[tether watch] second wake")
    try:
        submitted = wait_until(lambda: len(got := _submitted(out)) >= 2 and got, timeout=30)
    except AssertionError:
        shown = lab.run("capture-pane", "-p", "-t", pane)
        raise AssertionError(f"submitted {_submitted(out)}; the pane shows {shown!r}") from None
    assert submitted == ["[tether watch] first wake", "[tether watch] second wake"]


def test_a_typed_line_reaches_a_plain_shell_once(lab: TmuxLab) -> None:
    out = lab.root / "lines.txt"
    pane = lab.window(
        lab.root / "shell", ["sh", "-c", f'while read -r l; do echo "$l" >> {out}; done']
    )
    lab.tmux.send_text(pane, "one line")
    wait_until(lambda: out.exists() and out.read_text("utf-8"), what="the line")
    lab.tmux.send_text(pane, "another line")
    wait_until(lambda: len(out.read_text("utf-8").splitlines()) >= 2, what="both lines")
    assert out.read_text("utf-8").splitlines() == ["one line", "another line"]
