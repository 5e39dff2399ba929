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
# four tool steps and a final answer; the first step is bin/demo-step
args = ["--format", "claude-code", "--commands-file", "agent-steps.txt"]
default = true

# A step visible outside the project: a run proposes it, a person approves it.
[outbox.kinds.publish]
description = "Publish the built wheel to the package registry"
command = ["{python}", "bin/publish", "{{version}}"]
params.version = {{ pattern = "v[0-9]+\\\\.[0-9]+\\\\.[0-9]+" }}

# an agent that tries to raise its own budget: `tether demo` shows the sandbox refuse it
[profiles.escape]
harness = "scripted"
args = ["--format", "claude-code", "--commands-file", "escape.txt"]

[loop]
board = "tickets"
guard_interval = "15m"
# a follow-up of a limit-stopped run continues with this budget
follow_up_iterations = 10
# a ticket's front matter may propose its iteration budget (capped, recorded)
ticket_budgets = true

# The four level-2 sources: this example asks tools of its own (a project that
# names none gets the built-in sources every project has: docs/reference/loop.md).
[loop.sources."decisions.ledger"]
kind = "files"
path = "_control-center/_DECISIONS"

[loop.sources."memory.organic"]
kind = "command"
command = ["gardener", "find", "--json"]

[loop.sources."memory.curated"]
kind = "command"
commands = [
  ["usmc", "working", "--json"],
  ["usmc", "lessons", "--json"],
  ["usmc", "facts", "--json"],
]

[loop.sources."user.model"]
kind = "files"
path = "_control-center/_TOM-lm"
"""

AGENT_STEPS = """\
# What the demo's scripted agent does, one tool call per line (no shell).
demo-step
echo step 2
echo step 3
echo step 4
"""

# The agent's first step: for the release ticket it builds the wheel and proposes
# to publish it; publishing itself is visible outside, so it is only proposed.
DEMO_STEP = """#!{python}
import os, pathlib, subprocess, sys
run = pathlib.Path(os.environ["TETHER_HOME"], "runs", os.environ["TETHER_RUN_ID"])
if "Package the release" in (run / "prompt.md").read_text(encoding="utf-8"):
    dist = pathlib.Path("dist")
    dist.mkdir(exist_ok=True)
    (dist / "tool-0.1.0-py3-none-any.whl").write_text("the wheel\\n", encoding="utf-8")
    sys.exit(subprocess.call([sys.executable, "-m", "tether.cli.main", "outbox", "propose",
                              "publish", "version=v0.1.0", "-m", "the wheel is built"]))
print("worked on it")
"""

# The registry stand-in: publishing copies the wheel into registry/.
PUBLISH = """#!{python}
import pathlib, shutil, sys
version = sys.argv[1].lstrip("v")
wheel = pathlib.Path("dist", f"tool-{{version}}-py3-none-any.whl")
registry = pathlib.Path("registry")
registry.mkdir(exist_ok=True)
shutil.copy(wheel, registry / wheel.name)
print(f"published {{wheel.name}} to {{registry}}/")
"""

# what the escape profile's agent tries: raise every later run's budget
ESCAPE = "sh -c 'echo \"tool_call_limit = 100000\" >> tether.toml'\n"

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
    registry: Path  # where an approved publish puts the wheel
    # no sandbox can start on this machine: the demo's runs go without one
    unsandboxed: bool = False

    def env(
        self, *, with_later: bool = False, base: dict[str, str] | None = None
    ) -> dict[str, str]:
        """The demo's environment: its own home, and a PATH without the user's tools."""
        env = dict(os.environ if base is None else base)
        env["TETHER_HOME"] = str(self.home)
        if self.unsandboxed:
            env["TETHER_SANDBOX"] = "off"
        dirs = [str(self.bin), *([str(self.later)] if with_later else []), os.defpath]
        env["PATH"] = os.pathsep.join(dirs)
        return env


def _stand_in(folder: Path, name: str) -> None:
    _script(folder / name, STAND_IN.replace("{name}", name))


def _script(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text.format(python=sys.executable), encoding="utf-8")
    path.chmod(0o755)


def build(root: Path, clock: Clock | None = None, *, unsandboxed: bool = False) -> Example:
    """Write the example project into ``root`` (an empty or new folder)."""
    clock = clock or SystemClock()
    root.mkdir(parents=True, exist_ok=True)
    (root / "tether.toml").write_text(CONFIG.format(python=sys.executable), encoding="utf-8")
    (root / "agent-steps.txt").write_text(AGENT_STEPS, encoding="utf-8")
    _script(root / "bin" / "demo-step", DEMO_STEP)
    _script(root / "bin" / "publish", PUBLISH)
    (root / "escape.txt").write_text(ESCAPE, encoding="utf-8")
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
        registry=root / "registry",
        unsandboxed=unsandboxed,
    )
