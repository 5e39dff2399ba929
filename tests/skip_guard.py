"""Under ``CI=true`` a session that skipped a test outside the allow-list fails.

A skip on a developer's machine is a hint (a CLI not installed, another OS); in
CI it is a test that silently did not run. :class:`SkipGuard` collects every
skip (and xfail) of the session, at collection and at each test phase, and when
``CI=true`` it lists each one not on the allow-list (``tests/skip_allowlist.py``)
with its reason and turns the exit status into "tests failed".
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field

import pytest
from tests.skip_allowlist import ALLOWED, Allowed


def in_ci() -> bool:
    return os.environ.get("CI") == "true"


def _reason(report: pytest.CollectReport | pytest.TestReport) -> str:
    if hasattr(report, "wasxfail"):
        return f"xfail: {report.wasxfail}"
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


@dataclass(eq=False)  # pluggy keeps plugins in sets
class SkipGuard:
    """The pytest plugin: registered by ``tests/conftest.py`` with :data:`ALLOWED`."""

    allowed: Sequence[Allowed] = ALLOWED
    skipped: list[tuple[str, str]] = field(default_factory=list)

    def _note(self, report: pytest.CollectReport | pytest.TestReport) -> None:
        if report.skipped:
            self.skipped.append((report.nodeid, _reason(report)))

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        self._note(report)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self._note(report)

    def unexpected(self) -> list[tuple[str, str]]:
        return [
            (nodeid, reason)
            for nodeid, reason in self.skipped
            if not any(entry.matches(nodeid, reason) for entry in self.allowed)
        ]

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if in_ci() and self.unexpected() and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if not in_ci():
            return
        unexpected = self.unexpected()
        if not unexpected:
            return
        terminalreporter.section("skips outside tests/skip_allowlist.py (CI=true)", red=True)
        for nodeid, reason in unexpected:
            terminalreporter.line(f"SKIPPED {nodeid}: {reason}")
        terminalreporter.line(
            f"{len(unexpected)} skipped test(s) not on the allow-list: under CI=true "
            "every test runs (see docs/how-to/test-offline.md)",
            red=True,
        )
