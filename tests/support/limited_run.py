"""``tether run`` on a real agent CLI against the scripted model server, under limits.

The real-harness tests and ``bench/guarantees.py`` run the same thing: a project
whose default profile drives ``harness`` at the server, a minimal environment
(the CLI's folder and node on ``PATH``, a private ``HOME`` and tether home), and
``tether run --json`` with the limit flags given.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from tether.testing.model_server import client_setup

TETHER = str(Path(sys.executable).parent / "tether")
PROMPT = "Run the scripted steps."


def toml_inline(table: Mapping[str, str]) -> str:
    """``table`` as a TOML inline table."""
    return "{ " + ", ".join(f"{k} = {json.dumps(v)}" for k, v in table.items()) + " }"


def limited_run_command(
    harness: str,
    exe: Path,
    port: int,
    tmp: Path,
    tether_home: Path,
    flags: Sequence[str],
    *,
    config: str = "",
    extra_args: Sequence[str] = (),
    extra_env: Mapping[str, str] | None = None,
    prompt: str = PROMPT,
    run_timeout: int = 90,
    model: str | None = None,
) -> tuple[list[str], dict[str, str], Path]:
    """The argv, environment and work folder of the run :func:`limited_run` starts.

    For a caller that starts it itself (to kill it midway, say).
    """
    setup = client_setup(harness, tmp / "home", port)
    chosen = model or setup.model
    work = tmp / "work"
    work.mkdir(exist_ok=True)
    (work / "tether.toml").write_text(
        f"kill_grace_seconds = 2\n{config}\n"
        f"[profiles.real]\nharness = {json.dumps(harness)}\n"
        + (f"model = {json.dumps(chosen)}\n" if chosen else "")
        + f"args = {json.dumps([*setup.extra_args, *extra_args])}\n"
        f"env = {toml_inline({**setup.env, **(extra_env or {})})}\ndefault = true\n"
    )
    node_dir = Path(shutil.which("node") or "/usr/bin/node").parent
    env = {
        "PATH": f"{exe.parent}{os.pathsep}{node_dir}{os.pathsep}{os.environ['PATH']}",
        "TETHER_HOME": str(tether_home),
        "TETHER_USER_CONFIG": str(tmp / "none.toml"),
        "HOME": str(tmp / "home"),
    }
    timeout = [] if "--timeout" in flags else ["--timeout", str(run_timeout)]
    argv = [TETHER, "run", "--json", "--prompt", prompt, *flags, *timeout]
    return argv, env, work


def limited_run(
    harness: str,
    exe: Path,
    port: int,
    tmp: Path,
    tether_home: Path,
    flags: Sequence[str],
    *,
    config: str = "",
    extra_args: Sequence[str] = (),
    extra_env: Mapping[str, str] | None = None,
    prompt: str = PROMPT,
    run_timeout: int = 90,
    wait: float = 150,
    model: str | None = None,
) -> tuple[subprocess.CompletedProcess[str], Path]:
    """Run ``tether run --json`` with ``flags`` in ``tmp/work``; the process and the folder.

    ``exe`` is the CLI, ``port`` the scripted model server's; ``config`` goes at
    the top of ``tether.toml``, ``extra_args`` after the CLI's own in the profile's
    ``args``, ``extra_env`` over the CLI's own in the profile's ``env``; ``model``
    replaces the profile's model. ``--timeout run_timeout`` is added unless the
    flags carry one; ``wait`` is how long to wait for ``tether run`` itself.
    """
    argv, env, work = limited_run_command(
        harness,
        exe,
        port,
        tmp,
        tether_home,
        flags,
        config=config,
        extra_args=extra_args,
        extra_env=extra_env,
        prompt=prompt,
        run_timeout=run_timeout,
        model=model,
    )
    done = subprocess.run(
        argv,
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=wait,
        check=False,
    )
    return done, work
