"""Fixtures for the ``real_harness`` tier: real agent CLIs against the scripted model.

The CLIs are found by :mod:`tests.agent_clis` (``.ci/agents``, or
``$TETHER_AGENT_BIN_DIR``): a missing one skips its tests, and fails them under
CI (``CI=true``). Each CLI runs in a fresh HOME under the test's tmp dir,
configured by :func:`tether.testing.model_server.client_setup`, with a minimal
environment.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
from tests import agent_clis

from tether.events.accounting import Ledger, count
from tether.events.counting import merge_session
from tether.events.lines import iter_lines
from tether.harnesses import get_harness
from tether.harnesses.base import Harness, RunSpec, ToolAllowance
from tether.testing.model_server import (
    ClientSetup,
    LogSummary,
    ModelServer,
    RequestRecord,
    client_setup,
)
from tether.testing.model_server.scenario import Scenario

PROMPT = "Run the scripted steps."
RUN_TIMEOUT = 300.0


def find_cli(harness: Harness) -> Path:
    """The CLI's executable, or skip (fail under CI)."""
    return agent_clis.require(harness.name)


def load_adapter(name: str) -> Harness:
    """The adapter of a CLI name (``pi-1`` is Pi 1.x, driven as the ``pi`` harness)."""
    return get_harness(agent_clis.harness_of(name))


@dataclass
class AgentRun:
    """One real CLI run and both sides of the count."""

    harness: str
    argv: list[str]
    returncode: int
    stdout: bytes
    stderr: bytes
    ledger: Ledger
    session_file: Path | None
    requests: list[RequestRecord]
    summary: LogSummary
    setup: ClientSetup

    def explain(self) -> str:
        """Context for a failed assertion."""
        tail = self.stderr.decode("utf-8", "replace")[-1500:]
        steps = [
            (r.step, r.action, len(r.tool_calls), r.tool_results_in_history) for r in self.requests
        ]
        return f"argv={self.argv}\nrc={self.returncode}\nrequests={steps}\nstderr tail:\n{tail}"


def count_run(adapter: Harness, stdout: bytes, env: dict[str, str]) -> tuple[Ledger, Path | None]:
    """The adapter's ledger of ``stdout``; exact iterations from the session file
    where the stream has none (Codex's rollout)."""
    ledger = count(
        event for line in iter_lines(io.BytesIO(stdout)) for event in adapter.parse_line(line)
    )
    if adapter.iteration_source != "session_file" or ledger.session_id is None:
        return ledger, None
    path = adapter.session_file(ledger.session_id, env)
    if path is None or not path.is_file():
        return ledger, path
    with path.open("rb") as fh:
        session = count(
            event for line in iter_lines(fh) for event in adapter.parse_session_line(line)
        )
    return merge_session(ledger, session), path


def run_cli(
    harness: str,
    server: ModelServer,
    root: Path,
    extra_args: Sequence[str] = (),
    extra_env: Mapping[str, str] | None = None,
    allow: ToolAllowance | None = None,
) -> AgentRun:
    """Run ``harness``'s real CLI headless against ``server`` until it exits.

    ``extra_args`` go after the offline setup's own flags (hooks, extensions);
    ``extra_env`` is laid over the CLI's environment; ``allow`` is the run's
    tool allow-list (``RunSpec.allow``)."""
    adapter = load_adapter(harness)
    exe = agent_clis.require(harness)
    setup = client_setup(adapter.name, root / "home", server.port)
    work = root / "work"
    work.mkdir(parents=True, exist_ok=True)
    # a run with its own allow-list gets no blanket grant from the offline setup
    setup_args = setup.extra_args if allow is None else setup.args_without_permissions
    args = (*setup_args, *extra_args)
    spec = RunSpec(prompt=PROMPT, model=setup.model, extra_args=args, cwd=work, allow=allow)
    argv = adapter.build_command(spec)
    argv[argv.index(adapter.executable)] = str(exe)  # Vibe's argv may start with `env VAR=…`
    node_dir = Path(shutil.which("node") or "/usr/bin/node").parent
    env = {
        "PATH": f"{node_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        **setup.env,
        **(extra_env or {}),
    }
    done = subprocess.run(
        argv,
        cwd=work,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=RUN_TIMEOUT,
        check=False,
    )
    ledger, session_path = count_run(adapter, done.stdout, env)
    return AgentRun(
        harness,
        argv,
        done.returncode,
        done.stdout,
        done.stderr,
        ledger,
        session_path,
        server.requests,
        server.summary(),
        setup,
    )


@pytest.fixture
def model_server() -> Iterator[Callable[..., ModelServer]]:
    """Start scripted model servers on 127.0.0.1, port 0; stopped after the test."""
    started: list[ModelServer] = []

    def start(scenario: str | Scenario = "five-steps", think: float = 0.0) -> ModelServer:
        server = ModelServer(scenario, think=think).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def agent_cli() -> Callable[[str], tuple[Harness, Path]]:
    """``agent_cli(name)``: the adapter and the CLI executable, or skip (fail
    under CI). Use this rather than importing from this conftest."""

    def find(name: str) -> tuple[Harness, Path]:
        return load_adapter(name), agent_clis.require(name)

    return find


@pytest.fixture
def run_agent(model_server: Callable[..., ModelServer], tmp_path: Path) -> Callable[..., AgentRun]:
    """``run_agent(harness, scenario, think=0.0, extra_args=(), extra_env=None, allow=None)``: a
    fresh server, HOME and work dir, the real CLI run to its end, both sides of
    the count."""
    runs = 0

    def run(
        harness: str,
        scenario: str | Scenario,
        think: float = 0.0,
        extra_args: Sequence[str] = (),
        extra_env: Mapping[str, str] | None = None,
        allow: ToolAllowance | None = None,
    ) -> AgentRun:
        nonlocal runs
        runs += 1
        root = tmp_path / f"agent-{runs}"
        server = model_server(scenario, think)
        return run_cli(harness, server, root, extra_args, extra_env, allow)

    return run
