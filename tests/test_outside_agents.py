"""tests/outside_agents.py: a command leaves the process tree of an agent that runs the tests."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.outside_agents import detached

# Stands for an agent CLI that runs pytest: named like one, it starts the probe
# once directly and once detached, with the same stdio and exit code.
AGENT = """\
import json, subprocess, sys
launcher, probe = json.loads(sys.argv[1]), sys.argv[2:]
direct = subprocess.run(probe, capture_output=True, text=True)
away = subprocess.run(launcher, capture_output=True, text=True, input="from stdin")
print(json.dumps([direct.stdout, [away.returncode, away.stdout, away.stderr]]))
"""

PROBE = """\
import os, sys
from tether.core.agent_tree import agent_ancestry
print(agent_ancestry(os.getppid(), environ={}), sys.stdin.read(), os.getsid(0) == os.getpid())
sys.stderr.write("to stderr")
sys.exit(7)
"""


def test_a_detached_command_has_no_agent_ancestor_and_keeps_stdio_and_exit_code(
    tmp_path: Path,
) -> None:
    agent = tmp_path / "bin" / "codex"
    agent.parent.mkdir()
    agent.write_text(AGENT)
    probe = [sys.executable, "-c", PROBE]
    done = subprocess.run(
        [sys.executable, str(agent), json.dumps(detached(probe, new_session=True)), *probe],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    direct, away = json.loads(done.stdout)
    assert direct.startswith("process ") and "(codex) is an ancestor" in direct
    assert away == [7, "None from stdin True\n", "to stderr"]
