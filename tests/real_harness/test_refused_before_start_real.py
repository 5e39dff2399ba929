"""Configurations that cannot work are refused before the agent starts, in one line.

Real Vibe and Pi against the scripted model server, through ``tether run``:
the model server's log proves that no model request was sent.

- Vibe names models by alias. A profile naming the model (``mock-model``)
  instead of its alias (``mock``) makes Vibe fall back to its default provider
  and fail on a missing key; tether refuses it and names the aliases.
- Pi prices each call from ``models.json``; a model defined there without
  ``cost`` costs $0.00 per call, so ``--cost`` could never fire.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from tests.support.limited_run import limited_run

from tether.harnesses.base import Harness
from tether.testing.model_server import ModelServer
from tether.testing.model_server.clients import MODEL, VIBE_ALIAS

pytestmark = [pytest.mark.real_harness, pytest.mark.timeout(600)]


def _one_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert lines[0].startswith("tether: error: "), stderr
    return lines[0]


def test_a_vibe_model_that_is_not_an_alias_is_refused_naming_the_aliases(
    agent_cli: Callable[[str], tuple[Harness, Path]],
    model_server: Callable[..., ModelServer],
    tmp_path: Path,
    tether_home: Path,
) -> None:
    _adapter, exe = agent_cli("vibe")
    server = model_server("touch-forever")
    done, _ = limited_run("vibe", exe, server.port, tmp_path, tether_home, (), model=MODEL)
    assert done.returncode == 3, done.stdout + done.stderr
    line = _one_line(done.stderr)
    assert f"Vibe's model {MODEL!r} is not among the models" in line, line
    assert VIBE_ALIAS in line.partition("aliases: ")[2], line
    assert server.requests == []
    assert not (tether_home / "runs").exists() or not any((tether_home / "runs").iterdir())


def test_a_cost_limit_on_a_pi_model_without_prices_is_refused(
    agent_cli: Callable[[str], tuple[Harness, Path]],
    model_server: Callable[..., ModelServer],
    tmp_path: Path,
    tether_home: Path,
) -> None:
    _adapter, exe = agent_cli("pi")
    server = model_server("touch-forever")
    flags = ("--cost", "0.01")
    done, _ = limited_run("pi", exe, server.port, tmp_path, tether_home, flags)
    assert done.returncode == 3, done.stdout + done.stderr
    line = _one_line(done.stderr)
    assert f"Pi's model mock/{MODEL} has no prices" in line, line
    assert server.requests == []
