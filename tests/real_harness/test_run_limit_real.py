"""`tether run` drives a real agent CLI that would never stop, and stops it on budget."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tether.harnesses.base import Harness
from tether.testing.model_server import ModelServer, client_setup

pytestmark = pytest.mark.real_harness

TETHER = str(Path(sys.executable).parent / "tether")


def _toml_inline(env: dict[str, str]) -> str:
    return "{ " + ", ".join(f"{k} = {json.dumps(v)}" for k, v in env.items()) + " }"


@pytest.mark.parametrize("harness", ["codex", "pi", "claude-code"])
def test_never_stopping_agent_is_stopped_at_the_iteration_limit(
    harness: str,
    agent_cli: Callable[[str], tuple[Harness, Path]],
    model_server: Callable[..., ModelServer],
    tmp_path: Path,
    tether_home: Path,
) -> None:
    _adapter, exe = agent_cli(harness)
    server = model_server("forever", think=0.05)
    setup = client_setup(harness, tmp_path / "home", server.port)
    work = tmp_path / "work"
    work.mkdir()
    (work / "tether.toml").write_text(
        "kill_grace_seconds = 2\n\n"
        f"[profiles.real]\nharness = {json.dumps(harness)}\n"
        + (f"model = {json.dumps(setup.model)}\n" if setup.model else "")
        + f"args = {json.dumps(list(setup.extra_args))}\n"
        f"env = {_toml_inline(setup.env)}\ndefault = true\n"
    )
    node_dir = Path(shutil.which("node") or "/usr/bin/node").parent
    env = {
        "PATH": f"{exe.parent}{os.pathsep}{node_dir}{os.pathsep}{os.environ['PATH']}",
        "TETHER_HOME": str(tether_home),
        "TETHER_USER_CONFIG": str(tmp_path / "none.toml"),
        "HOME": str(tmp_path / "home"),
    }
    done = subprocess.run(
        [
            TETHER,
            "run",
            "--json",
            "--prompt",
            "Run the scripted steps.",
            "--iterations",
            "3",
            "--timeout",
            "90",
        ],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    why = f"stderr: {done.stderr[-2000:]}\nrequests: {[r.step for r in server.requests]}"
    assert done.returncode == 20, why
    record = json.loads(done.stdout)
    assert record["status"] == "iteration_limit", why
    # the model was asked at most limit times, plus at most one call in flight at the stop
    assert server.model_calls <= 4, why
    if harness in ("claude-code", "pi"):
        # their per-run hooks end the session before model call 4 is sent
        assert server.model_calls == 3, why
        assert record["tool_calls"] == 3, why
    assert record["iterations"] >= 3, why
    report = record["report"]
    assert report["stop_reason"] == "iteration_limit"
    assert Path(record["run_dir"], "report.md").exists()
    assert record["harness_session_id"], why
