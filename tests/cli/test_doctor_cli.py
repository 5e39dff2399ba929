"""``tether doctor`` bad input: one line and the usage exit code, before any probe runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

TETHER = str(Path(sys.executable).parent / "tether")


def test_unknown_harness_is_one_line_and_exit_2(tmp_path: Path, tether_home: Path) -> None:
    done = subprocess.run(
        [TETHER, "doctor", "--harness", "cursor"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.splitlines() == [
        "tether: error: unknown harness 'cursor'; known: claude-code, codex, copilot, pi, vibe"
    ]


def _keys(value: object) -> object:
    """The shape of a JSON value: keys all the way down (first list item only)."""
    if isinstance(value, dict):
        return {k: _keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_keys(value[0])] if value else []
    return None


def test_the_reference_pages_json_has_the_reports_shape() -> None:
    import json
    import re

    from tether.doctor.model import DoctorReport, HarnessCheck, HookFile, Probe, Trust

    page = Path(__file__).resolve().parents[2] / "docs" / "reference" / "doctor.md"
    (block,) = re.findall(r"^```json\n(.*?)^```$", page.read_text(), flags=re.DOTALL | re.M)
    documented = json.loads(block)
    probe = Probe(True, False, 1, 1, 3, 0, False, 1.0)
    check = HarnessCheck(
        "codex",
        "not enforced",
        "why",
        "fix",
        executable="codex",
        version="1",
        hooks=[HookFile("project", "p", True, True)],
        trust=[Trust("codex project", "p", "trusted")],
        probe=probe,
    )
    assert _keys(documented) == _keys(DoctorReport("p", [check]).as_dict())


def test_hooks_trust_without_codex_on_path_is_exit_4(tmp_path: Path, tether_home: Path) -> None:
    done = subprocess.run(
        [TETHER, "hooks", "trust", "--harness", "codex", "--project-dir", str(tmp_path)],
        cwd=tmp_path,
        env={"PATH": str(tmp_path), "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 4, done.stderr
    assert len(done.stderr.splitlines()) == 1
    assert "'codex' was not found on PATH" in done.stderr
