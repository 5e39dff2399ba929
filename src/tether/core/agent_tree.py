"""Whether this process runs inside an agent's process tree: the one test.

Every action only a person may take (``tether.human_only``) and the gate's
refusal to take a new session id from inside an agent
(``tether.gate.newsession``) ask this same question, so an escape that fools one
fools neither: inside a run's sandbox the answer is always yes (its gate socket
is a mount point the agent cannot remove, whatever ``env -i … setsid -f`` left of
the environment and the process tree); outside, a variable an agent CLI sets or
an agent CLI among the ancestors says yes. Standard library only: the gate
imports it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from tether.core import process_tree
from tether.core.agents import match_agent

# Inside every sandbox: the folder holding the sockets bound in from outside. Its
# presence is also how a program tells it runs inside a tether sandbox.
INSIDE_DIR = Path("/run/tether")
GATE_SOCKET = INSIDE_DIR / "gate.sock"

# Variables agent CLIs (and tether run) set for every process they start.
AGENT_ENV_MARKERS = (
    "TETHER_RUN_ID",
    "CLAUDECODE",
    "CLAUDE_CODE_SESSION_ID",
    "CODEX_THREAD_ID",
    "COPILOT_CLI",
    "AI_AGENT",
)


def agent_ancestry(
    start_pid: int | None = None, environ: Mapping[str, str] | None = None
) -> str | None:
    """Why the environment or the process tree shows an agent, or None.

    ``start_pid`` is the first process whose ancestors are looked at (the
    parent of this process when None)."""
    env = os.environ if environ is None else environ
    for name in AGENT_ENV_MARKERS:
        if env.get(name):
            return f"{name} is set"
    chain = process_tree.ancestors(os.getppid() if start_pid is None else start_pid)
    for info in chain:
        agent = match_agent(info.comm, info.argv)
        if agent is not None:
            return f"process {info.pid} ({agent}) is an ancestor"
    return None


def inside_agent(
    start_pid: int | None = None, environ: Mapping[str, str] | None = None
) -> str | None:
    """Why this process counts as inside an agent's process tree, or None."""
    if GATE_SOCKET.exists():
        return f"inside a run's sandbox ({GATE_SOCKET} is there)"
    return agent_ancestry(start_pid, environ)
