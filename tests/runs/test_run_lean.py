"""A ``tether run`` whose agent ends by itself loads only what such a run needs.

Every supervised run pays its supervisor's imports (the speed itself is
bench/cli_start.py's ``run`` line). A run that ends by itself, leaves an empty
outbox and finds no abandoned run needs neither psutil (stopping a sandboxed
agent, reaping an abandoned run) nor the outbox's records, checks and carrying
out (collecting a proposal file, approving one), nor secrets (its ids come from
os.urandom), nor difflib (a "did you mean", a hook file's diff). Its guardian,
one more interpreter per run, loads nothing it does not use.
"""

from __future__ import annotations

import subprocess
import sys

from tests.runs.conftest import Project
from tests.support.loaded import tether_loaded

NOT_NEEDED = (
    "difflib",
    "psutil",
    "tether.outbox.actions",
    "tether.outbox.decide",
    "tether.outbox.git",
    "tether.outbox.model",
    "tether.outbox.proposal_store",
    "tether.outbox.propose",
    "secrets",
)


def test_a_run_that_ends_by_itself_loads_no_psutil_and_no_outbox_checks(project: Project) -> None:
    project.write_config(["--steps", "2"])
    out, loaded = tether_loaded(project.root, "run", "--json", "--prompt", "tidy the parser")
    assert '"status": "completed"' in out
    assert "tether.outbox.collect" in loaded  # the outbox was collected, and was empty
    assert not {m for m in loaded if m in NOT_NEEDED or m.split(".")[0] in NOT_NEEDED}


def test_the_guardian_loads_no_contextlib() -> None:
    done = subprocess.run(
        [sys.executable, "-P", "-c", "import sys, tether.runs.guardian; print(*sys.modules)"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert "contextlib" not in done.stdout.split()
