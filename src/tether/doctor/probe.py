"""The live probe: does the gate, as installed, stop this CLI in this project?

The CLI runs headless in the user's project folder against tether's scripted
model server, whose script asks for two tool calls, each creating its own file
in a throwaway folder (absolute paths: nothing is written in the project). The
gate hooks are the ones the CLI finds there and in the probe's HOME (a copy of
the user's, see :mod:`tether.doctor.mirror`), with a gate budget of 1 and a
throwaway ``TETHER_HOME``: the user's sessions, budgets and ``gate.db`` are
never touched. Proof of the leash: file 1 exists, file 2 does not, and the
gate's own log has a refusal.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from tether.doctor import sandboxed
from tether.doctor.mirror import mirror
from tether.doctor.model import Probe
from tether.harnesses import get_harness
from tether.harnesses.base import RunSpec
from tether.testing.model_server import ModelServer, client_setup
from tether.testing.model_server.clients import MODEL
from tether.testing.model_server.scenario import touch_files

PROMPT = "Run the two scripted tool calls."
# Seconds a probe may take before it is reported as timed out. Vibe starts
# slowly (20-65 s measured on a busy machine); the others answer in seconds.
DEFAULT_TIMEOUT_S = 60.0
TIMEOUT_S: dict[str, float] = {"vibe": 150.0}
# Flags of the offline setup that would hide the user's own trust state.
_TRUST_OVERRIDES = frozenset({"--trust", "--trust-folder", "--dangerously-bypass-hook-trust"})
_PASSED_ON = ("LANG", "LC_ALL", "TERM", "TMPDIR", "USER", "LOGNAME")


# The probes running now, so an interrupted doctor stops them at once.
_running: set[subprocess.Popen[bytes]] = set()
_running_lock = threading.Lock()


def stop_all() -> None:
    """Kill every probe's CLI (its whole process group) that is still running."""
    with _running_lock:
        procs = list(_running)
    for proc in procs:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)


def timeout_for(harness: str) -> float:
    return TIMEOUT_S.get(harness, DEFAULT_TIMEOUT_S)


def _gate_decisions(home: Path) -> tuple[int, int]:
    """(allowed, refused) tool calls in the probe's gate.db."""
    from tether.gate.eventlog import read_events
    from tether.gate.gate_db import db_file

    if not Path(db_file(str(home))).exists():
        return 0, 0
    try:
        events = read_events(home)
    except Exception:  # an unreadable probe db holds no decisions
        return 0, 0
    allowed = sum(1 for e in events if e.decision == "allow" and e.tool_use_id is not None)
    refused = sum(1 for e in events if e.decision == "deny")
    return allowed, refused


def _stop_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=10)


def _tail(path: Path, size: int = 600) -> str:
    try:
        data = path.read_bytes()
    except OSError:
        return ""
    return data[-size:].decode("utf-8", "replace").strip()


def _argv(harness: str, executable: str, project: str, extra: tuple[str, ...]) -> list[str]:
    adapter = get_harness(harness)
    args = tuple(a for a in extra if a not in _TRUST_OVERRIDES)
    model: str | None = None
    if harness in ("claude-code", "pi", "codex"):
        model = MODEL  # on the command line: a project's own config cannot override it
    if harness == "codex":
        args = (*args, "-c", 'model_provider="mock"')
    spec = RunSpec(prompt=PROMPT, model=model, extra_args=args, cwd=Path(project))
    argv = adapter.build_command(spec)
    argv[argv.index(adapter.executable)] = executable
    return argv


@dataclass(frozen=True)
class _Ran:
    """How the CLI's process ended (or why it never started)."""

    exit_code: int | None = None
    timed_out: bool = False
    error: str | None = None


@dataclass(frozen=True)
class ProbeOptions:
    """How a probe runs: its time limit (else the harness's own), whether its folder is
    kept for a look afterwards, and whether the CLI runs inside tether's sandbox, as a
    run starts it (``doctor/sandboxed.py``)."""

    timeout: float | None = None
    keep: bool = False
    sandbox: bool = False


def run_probe(
    harness: str,
    executable: str,
    project: str,
    environ: Mapping[str, str],
    options: ProbeOptions = ProbeOptions(),
) -> Probe:
    """Run the probe once; never raises for what the CLI does (that is the finding)."""
    limit = timeout_for(harness) if options.timeout is None else options.timeout
    keep = options.keep
    root = Path(tempfile.mkdtemp(prefix=f"tether-doctor-{harness}-"))
    effects = root / "effects"
    effects.mkdir()
    files = [effects / "call-1", effects / "call-2"]
    gate_home = root / "tether-home"
    started = time.monotonic()
    try:
        with ModelServer(touch_files([str(f) for f in files], "doctor-probe")) as server:
            setup = client_setup(harness, root / "home", server.port)
            mirror(environ, setup.env, project)
            env = _probe_env(environ, setup.env, gate_home)
            extra = setup.extra_args
            if options.sandbox:
                extra = (*extra, *sandboxed.own_sandbox_off(harness, env))
            argv = _argv(harness, executable, project, extra)
            with contextlib.ExitStack() as stack:
                fds: tuple[int, ...] = ()
                if options.sandbox:
                    inside = stack.enter_context(
                        sandboxed.sandboxed(
                            harness, argv, env, project, [effects, root / "home"], gate_home
                        )
                    )
                    argv, env, fds = inside.argv, dict(inside.env), inside.pass_fds
                ran = _run_cli(argv, project, env, root, limit, fds)
            model_calls = server.model_calls
        allowed, refused = _gate_decisions(gate_home)
        return Probe(
            first_ran=files[0].exists(),
            second_ran=files[1].exists(),
            gate_allowed=allowed,
            gate_refused=refused,
            model_calls=model_calls,
            exit_code=ran.exit_code,
            timed_out=ran.timed_out,
            seconds=round(time.monotonic() - started, 1),
            error=ran.error,
            stderr_tail=_tail(root / "stderr.log"),
            kept=str(root) if keep else None,
        )
    finally:
        if not keep:
            shutil.rmtree(root, ignore_errors=True)


def _probe_env(
    environ: Mapping[str, str], client_env: Mapping[str, str], gate_home: Path
) -> dict[str, str]:
    """The CLI's environment: a few of the user's variables, the offline client's, and
    the probe's own gate (its home, a budget of 1)."""
    env = {k: environ[k] for k in _PASSED_ON if k in environ}
    env.update(
        {
            "PATH": environ.get("PATH", os.defpath),
            **client_env,
            "TETHER_HOME": str(gate_home),
            "TETHER_GATE_BUDGET": "1",
        }
    )
    return env


def _run_cli(
    argv: list[str],
    project: str,
    env: Mapping[str, str],
    root: Path,
    limit: float,
    pass_fds: tuple[int, ...] = (),
) -> _Ran:
    """The CLI in its own process group, its output into ``root``, stopped at ``limit``."""
    with (root / "stdout.log").open("wb") as out, (root / "stderr.log").open("wb") as err:
        try:
            proc = subprocess.Popen(
                argv,
                cwd=project,
                env=dict(env),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                start_new_session=True,
                pass_fds=pass_fds,
            )
        except OSError as exc:
            return _Ran(error=f"cannot start {argv[0]}: {exc.strerror or exc}")
        with _running_lock:
            _running.add(proc)
        try:
            return _Ran(exit_code=proc.wait(timeout=limit))
        except subprocess.TimeoutExpired:
            return _Ran(timed_out=True)
        finally:
            _stop_group(proc)
            with _running_lock:
                _running.discard(proc)
