"""The house rules that tools can check: lint, format, strict types, module size."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=540, check=False)


# mypy over the whole tree without a cache (a fresh clone) takes minutes on a busy machine
@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.parametrize(
    "argv",
    [
        ("ruff", "check", "."),
        ("ruff", "format", "--check", "."),
        ("mypy",),
    ],
    ids=["ruff-check", "ruff-format", "mypy-strict"],
)
def test_tool_is_clean(argv: tuple[str, ...]) -> None:
    done = _run(str(BIN / argv[0]), *argv[1:])
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


def test_no_module_over_the_split_threshold() -> None:
    too_big = {
        str(path.relative_to(ROOT)): n
        for path in (ROOT / "src").rglob("*.py")
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > 500
    }
    assert not too_big, f"split these by job (ARCHITECTURE.md): {too_big}"


def test_no_grab_bag_modules() -> None:
    names = {p.name for p in (ROOT / "src").rglob("*.py")}
    assert not names & {"utils.py", "helpers.py", "misc.py"}
