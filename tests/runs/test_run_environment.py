"""What the agent of a run is given, and how a run is cancelled from outside."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.runs.conftest import TETHER, Project

from tether.store.runs import RunRow, get_run, list_runs
from tether.store.state_db import connect

DUMP = """
import json, os, sys
keys = ("TETHER_RUN_ID", "TETHER_SESSION_ID", "TETHER_DEPTH", "FROM_SHELL", "FROM_PROFILE")
with open(sys.argv[1], "w") as out:
    json.dump({k: os.environ.get(k) for k in keys}, out)
"""


def test_the_agent_gets_the_run_ids_the_depth_and_both_environments(
    project: Project, tmp_path: Path
) -> None:
    # inside the work folder: the sandboxed agent sees no other folder under /tmp
    dump, seen = project.root / "dump.py", project.root / "seen.json"
    dump.write_text(DUMP)
    commands = tmp_path / "commands.txt"
    commands.write_text(f"{sys.executable} {dump} {seen}\n")
    project.write_config(["--commands-file", str(commands)])
    toml = (project.root / "tether.toml").read_text()
    toml = toml.replace("default = true\n", 'default = true\nenv = { FROM_PROFILE = "p" }\n', 1)
    (project.root / "tether.toml").write_text(toml)
    done = subprocess.run(
        [TETHER, "run", "--json", "--prompt", "go", "--iterations", "5"],
        cwd=project.root,
        env={**os.environ, "FROM_SHELL": "s"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert json.loads(seen.read_text()) == {
        "TETHER_RUN_ID": record["id"],
        "TETHER_SESSION_ID": record["session_id"],
        "TETHER_DEPTH": "1",
        "FROM_SHELL": "s",
        "FROM_PROFILE": "p",
    }
    # the harness's own turn cap is passed as a second belt: limit + 1
    argv = record["argv"]
    assert argv[argv.index("--max-turns") + 1] == "6"
    assert "--resume" not in argv and "--continue" not in argv


def test_sigint_cancels_the_run_with_exit_24_and_a_report(project: Project) -> None:
    project.write_config(["--forever", "--step-delay", "0.05"])
    proc = subprocess.Popen(
        [TETHER, "run", "--json", "--prompt", "go", "--iterations", "100"],
        cwd=project.root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    conn = connect(project.home)
    deadline = time.monotonic() + 60
    running: list[RunRow] = []
    while time.monotonic() < deadline and not running and proc.poll() is None:
        running = [r for r in list_runs(conn) if r.status == "running" and r.agent_pgid]
        time.sleep(0.05)
    assert running, f"the run never started: {proc.communicate()[1] if proc.poll() else ''}"
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 24, err
    record = json.loads(out)
    assert record["status"] == "cancelled"
    assert record["report"]["stop_reason"] == "cancelled"
    assert get_run(conn, record["id"]).status == "cancelled"
    pgid = running[0].agent_pgid
    assert pgid is not None
    try:
        os.killpg(pgid, 0)
        alive = True
    except ProcessLookupError:
        alive = False
    except PermissionError:
        alive = True
    assert not alive or _only_zombies(pgid), "the agent's process group is gone"
    conn.close()


def _only_zombies(pgid: int) -> bool:
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            return False
    return True


def test_a_run_on_the_builtin_fake_agent_says_so(project: Project, tmp_path: Path) -> None:
    bare = tmp_path / "unconfigured"
    bare.mkdir()
    done = subprocess.run(
        [TETHER, "run", "--prompt", "go"],
        cwd=bare,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "no profile is configured, so this run uses the built-in scripted agent" in (done.stderr)
    project.write_config(["--steps", "1"])
    configured = project.tether("run", "--prompt", "go")
    assert configured.returncode == 0 and "built-in scripted agent" not in configured.stderr
