"""The example project of ``tether demo``: a small board, four sources, a scripted agent.

Everything is local: the agent is the scripted harness (a real process that
fakes only the model), the two memory CLIs are tiny stand-in scripts, and the
folders of the decisions ledger and the user model are plain folders. One
source is missing on purpose (``usmc`` is not on the demo's PATH) so that the
first stop is ``blind``; the stand-in waits in ``later/``.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from tether.board import Board, State, Ticket
from tether.clock import Clock, SystemClock

CONFIG = """\
# The demo's project configuration: a scripted agent, and the loop's defaults.
[profiles.scripted]
harness = "scripted"
args = ["--format", "claude-code", "--steps", "5"]
default = true

[loop]
board = "tickets"
guard_interval = "15m"
# a follow-up of a limit-stopped run continues with this budget
follow_up_iterations = 10
# a ticket's front matter may propose its iteration budget (capped, recorded)
ticket_budgets = true
# the four sources keep their defaults: _control-center/_DECISIONS, the
# `gardener` and `usmc` CLIs on PATH, and _control-center/_TOM-lm
"""

STAND_IN = """#!{python}
# A stand-in for the `{name}` CLI: answers that there is nothing new.
import json
print(json.dumps({{"status": "empty", "items": []}}))
"""


@dataclass(frozen=True)
class Example:
    root: Path
    home: Path
    bin: Path  # on the demo's PATH from the start
    later: Path  # holds the missing `usmc`, put on PATH by the demo's second act
    parser: Ticket  # needs more iterations than its budget
    typo: Ticket
    release: Ticket  # BLOCKED, its check passes
    review: Ticket  # WAITING until tomorrow
    licence: Ticket  # USER
    note: Path  # the informal INBOX note

    def env(
        self, *, with_later: bool = False, base: dict[str, str] | None = None
    ) -> dict[str, str]:
        """The demo's environment: its own home, and a PATH without the user's tools."""
        env = dict(os.environ if base is None else base)
        env["TETHER_HOME"] = str(self.home)
        dirs = [str(self.bin), *([str(self.later)] if with_later else []), os.defpath]
        env["PATH"] = os.pathsep.join(dirs)
        return env


def _stand_in(folder: Path, name: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(STAND_IN.format(python=sys.executable, name=name), encoding="utf-8")
    path.chmod(0o755)


def build(root: Path, clock: Clock | None = None) -> Example:
    """Write the example project into ``root`` (an empty or new folder)."""
    clock = clock or SystemClock()
    root.mkdir(parents=True, exist_ok=True)
    (root / "tether.toml").write_text(CONFIG, encoding="utf-8")
    decisions = root / "_control-center" / "_DECISIONS"
    decisions.mkdir(parents=True, exist_ok=True)
    (decisions / "DECIDED-AND-DONE.md").write_text("# Decided and done\n\n", encoding="utf-8")
    profile = root / "_control-center" / "_TOM-lm"
    profile.mkdir(parents=True, exist_ok=True)
    (profile / "README.md").write_text(
        "# What the user wants done without asking\n\n(no patterns recorded yet)\n",
        encoding="utf-8",
    )
    _stand_in(root / "bin", "gardener")
    _stand_in(root / "later", "usmc")
    (root / "build").mkdir(exist_ok=True)
    (root / "build" / "ready.txt").write_text("the build finished\n", encoding="utf-8")

    board = Board(root / "tickets", root, clock=clock)
    board.ensure()
    typo = board.add(
        "Fix the typo in the README",
        state=State.ACTIONABLE,
        body="`recieve` should be `receive` in the second paragraph.\n",
    )
    parser = board.add(
        "Port the parser to the new API",
        priority="P1",
        state=State.ACTIONABLE,
        body="Move parse() and its helpers to the new tokenizer API.\n",
        front={"budget": 3, "budget_reason": "a first estimate; the port may take longer"},
    )
    release = board.add(
        "Package the release",
        state=State.BLOCKED,
        reason="dependency",
        front={"blocked_by": "the build", "check": ["test", "-f", "build/ready.txt"]},
        body="Build the wheel once the build has finished.\n",
    )
    tomorrow = (clock.now() + timedelta(days=1)).date().isoformat()
    review = board.add(
        "Review the draft with the team",
        state=State.WAITING,
        reason="scheduled",
        front={"until": tomorrow},
    )
    licence = board.add(
        "Pick the licence",
        state=State.USER,
        reason="decision",
        front={"needs": "a choice: MIT or Apache-2.0"},
    )
    note = board.folder(State.INBOX) / "call-notes.txt"
    note.write_text(
        "Add a --version flag to the CLI\n\nAsked for in yesterday's call.\n", encoding="utf-8"
    )
    return Example(
        root=root,
        home=root / ".tether",
        bin=root / "bin",
        later=root / "later",
        parser=parser,
        typo=typo,
        release=release,
        review=review,
        licence=licence,
        note=note,
    )
