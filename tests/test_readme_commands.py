"""README.md begins with the two commands a newcomer runs, and CI runs the second.

``.ci/run`` must run exactly the README's test command (with ``CI=true``), so the
suite CI keeps green is the one a fresh clone runs.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return re.findall(r"^```bash\n(.*?)\n```$", text, flags=re.MULTILINE | re.DOTALL)[:2]


def test_the_readme_begins_with_install_and_demo_then_install_and_tests() -> None:
    demo, tests = _readme_commands()
    assert demo.endswith(".venv/bin/tether demo")
    assert tests.startswith("python3 -m venv .venv && .venv/bin/pip install -e '.[test]' && ")
    assert " -m pytest " in tests and " -n auto" in tests  # the suite on every core


def test_ci_runs_exactly_the_readme_test_command() -> None:
    _, tests = _readme_commands()
    lines = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()
    assert lines[-1] == tests
    assert "export CI=true" in lines
