"""Under CI=true a skip outside the allow-list fails the session (tests/skip_guard.py).

Each case runs pytest in a subprocess on a small test folder whose conftest
registers the guard with an allow-list of its own.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.skip_allowlist import ALLOWED, Allowed

REPO = Path(__file__).resolve().parents[1]

CONFTEST = """\
from tests.skip_allowlist import Allowed
from tests.skip_guard import SkipGuard


def pytest_configure(config):
    allowed = [Allowed("test_cases.py::test_allowed", "no frobnicator here", "this folder's own")]
    config.pluginmanager.register(SkipGuard(allowed), "guard")
"""

CASES = """\
import pytest


def test_runs():
    assert 1 + 1 == 2


def test_allowed():
    pytest.skip("no frobnicator here")
"""

UNEXPECTED = """\
import pytest


def test_skips():
    pytest.skip("the widget is missing")


@pytest.mark.xfail(reason="known to break")
def test_fails_expectedly():
    raise AssertionError
"""

MODULE_SKIP = """\
import pytest

pytest.skip("this whole module needs a widget", allow_module_level=True)
"""


def _pytest(folder: Path, ci: bool, *files: str) -> subprocess.CompletedProcess[str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k != "CI" and not k.startswith(("PYTEST_", "TETHER_"))
    }
    env["PYTHONPATH"] = str(REPO)
    if ci:
        env["CI"] = "true"
    if "-n" not in files:
        # the installed plugins (hypothesis, timeout, xdist) are half of a small session's
        # CPU and play no part in what the guard sees; the xdist case loads them all
        env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rs", *files],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_cases.py").write_text(CASES)
    (tmp_path / "test_unexpected.py").write_text(UNEXPECTED)
    (tmp_path / "test_module_skip.py").write_text(MODULE_SKIP)
    return tmp_path


@pytest.mark.slow
def test_an_allow_listed_skip_passes_under_ci(folder: Path) -> None:
    done = _pytest(folder, True, "test_cases.py")
    assert done.returncode == 0, done.stdout
    assert "1 passed, 1 skipped" in done.stdout
    assert "skips outside" not in done.stdout


@pytest.mark.slow
@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one-process", "xdist"])
def test_any_other_skip_fails_under_ci_with_each_reason(folder: Path, workers: list[str]) -> None:
    """Also when pytest-xdist runs the tests (the README's command): the workers'
    skips reach the guard in the controlling process."""
    done = _pytest(folder, True, *workers)
    assert done.returncode == 1, done.stdout
    section = done.stdout[done.stdout.index("skips outside tests/skip_allowlist.py (CI=true)") :]
    assert "SKIPPED test_unexpected.py::test_skips: the widget is missing" in section
    assert "SKIPPED test_unexpected.py::test_fails_expectedly: xfail: known to break" in section
    assert "SKIPPED test_module_skip.py: this whole module needs a widget" in section
    assert "test_cases.py::test_allowed" not in section
    assert "3 skipped test(s) not on the allow-list" in section


@pytest.mark.slow
def test_outside_ci_a_skip_is_only_reported(folder: Path) -> None:
    done = _pytest(folder, False)
    assert done.returncode == 0, done.stdout
    assert "skips outside" not in done.stdout
    assert "the widget is missing" in done.stdout  # pytest's own -rs summary


@pytest.mark.slow
def test_an_empty_run_does_not_pass_under_ci(folder: Path) -> None:
    done = _pytest(folder, True, "-k", "no_such_test")
    assert done.returncode == pytest.ExitCode.NO_TESTS_COLLECTED, done.stdout


def test_the_allow_list_gives_a_reason_for_every_entry() -> None:
    assert len(ALLOWED) <= 5, "the allow-list is meant to stay short"
    for entry in ALLOWED:
        assert isinstance(entry, Allowed)
        assert entry.test.startswith("tests/") and entry.reason_contains and entry.why


def test_an_entry_names_a_test_its_parameters_or_a_whole_module() -> None:
    exact = Allowed("tests/a.py::test_x", "gone", "why")
    assert exact.matches("tests/a.py::test_x", "it is gone")
    assert exact.matches("tests/a.py::test_x[pi]", "it is gone")
    assert not exact.matches("tests/a.py::test_x_other", "it is gone")
    assert not exact.matches("tests/a.py::test_x", "another reason")
    module = Allowed("tests/a.py::", "gone", "why")
    assert module.matches("tests/a.py::test_y", "gone")
    assert not module.matches("tests/b.py::test_y", "gone")
