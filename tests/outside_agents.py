"""Run a command outside every agent's process tree, even when pytest runs inside one.

Some tests need a process tree whose only agent is the one the test starts
(``tether session new`` from a plain shell, the gate's process-tree fallback).
When pytest itself runs inside an agent CLI, that agent is an ancestor of every
process the test starts. :func:`detached` wraps an argv so that it runs under a
process that has left the tree by a double fork (its parent becomes init), with
the same stdin, stdout and stderr, and the launcher exits with the command's
exit code. :func:`without_agent_vars` removes the variables by which an agent
announces itself from an environment. If the launched process still finds an
agent ancestor (an agent that adopts orphans), it exits with
:data:`STILL_INSIDE` and says why on stderr: the test fails instead of skipping.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping

from tether.core import agent_tree, session_identity

STILL_INSIDE = 97
# Variables that tell tether it runs inside an agent or name the agent's session.
AGENT_VARS = frozenset(session_identity.ALL_HARNESS_VARS) | frozenset(agent_tree.AGENT_ENV_MARKERS)

_LAUNCH = """\
import os, subprocess, sys, time
new_session, argv = sys.argv[1] == "1", sys.argv[2:]
read_end, write_end = os.pipe()
if os.fork() == 0:
    os.close(read_end)
    middle = os.getpid()
    if os.fork() != 0:
        os._exit(0)  # the middle process: its child is orphaned, adopted by init
    while os.getppid() == middle:
        time.sleep(0.001)
    from tether.core.agent_tree import agent_ancestry
    why = agent_ancestry(os.getpid(), environ={})
    if why is not None:
        sys.stderr.write(f"still inside an agent's process tree: {why}\\n")
        code = STILL_INSIDE
    else:
        code = subprocess.call(argv, start_new_session=new_session)
    os.write(write_end, str(code).encode())
    os._exit(0)
os.close(write_end)
os.wait()
with os.fdopen(read_end) as codes:
    sys.exit(int(codes.read() or 1))
""".replace("STILL_INSIDE", str(STILL_INSIDE))


def without_agent_vars(env: Mapping[str, str], *also: str) -> dict[str, str]:
    """``env`` without :data:`AGENT_VARS` (nor the variables ``also`` names)."""
    return {k: v for k, v in env.items() if k not in AGENT_VARS and k not in also}


def detached(argv: list[str], *, new_session: bool = False) -> list[str]:
    """``argv`` run outside the test runner's process tree, same stdio, same exit code;
    in a session of its own when ``new_session``."""
    return [sys.executable, "-c", _LAUNCH, "1" if new_session else "0", *argv]
