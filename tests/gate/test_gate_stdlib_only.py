"""The gate imports the standard library and tether.gate.* only (DESIGN "The hot path")."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

PROBE = r"""
import io, sys
before = set(sys.modules)
import tether.gate.hook as hook
imported = set(sys.modules) - before
# Run the hot path as well: lazy imports inside functions count too.
sys.stdin = io.TextIOWrapper(io.BytesIO(sys.argv[1].encode()))
out, sys.stdout = sys.stdout, io.StringIO()
try:
    hook.main(["hook", "--harness", "claude-code"])
    hook.main(["tick", "--session", "probe"])
    ran = set(sys.modules) - before
    hook.main(["status", "--session", "probe", "--json"])
finally:
    sys.stdout = out
import json
print(json.dumps({"import": sorted(imported), "run": sorted(ran)}))
"""

MODULES_PROBE = r"""
import json, sys, importlib
before = set(sys.modules)
for name in sys.argv[1:]:
    importlib.import_module(name)
print(json.dumps(sorted(set(sys.modules) - before)))
"""


def _offenders(modules: list[str]) -> list[str]:
    allowed_roots = set(sys.stdlib_module_names) | {"tether"}
    return [
        name
        for name in modules
        if name.split(".", 1)[0] not in allowed_roots
        or (name.startswith("tether.") and not name.startswith("tether.gate"))
    ]


def test_importing_and_running_the_hook_loads_only_stdlib_and_gate_modules(
    tmp_path: Path,
) -> None:
    payload = json.dumps(
        {"session_id": "probe", "hook_event_name": "PreToolUse", "tool_name": "Bash"}
    )
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, payload],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert "tether.gate.hook" in seen["import"]
    assert _offenders(seen["import"]) == []
    assert _offenders(seen["run"]) == []
    # The expensive stdlib modules the hot path avoids on purpose (DESIGN "The hot
    # path"): it reads its answers with json and sqlite3, nothing heavier.
    heavy = ("argparse", "pathlib", "dataclasses", "typing", "tomllib")
    for name in heavy:
        assert name not in seen["run"], name


@pytest.mark.parametrize(
    "module",
    [
        "tether.gate.counter",
        "tether.gate.eventlog",
        "tether.gate.session_id",
        "tether.gate.hook_install",
        "tether.gate.hook_command",
        "tether.gate.hook_file",
        "tether.gate.hook_json",
        "tether.gate.hook_vibe",
        "tether.gate.newsession",
        "tether.gate.plan",
        "tether.gate.pi_gate_extension",
    ],
)
def test_every_gate_module_is_stdlib_only(module: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", MODULES_PROBE, module],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert _offenders(json.loads(proc.stdout)) == []


def test_main_in_process_leaves_the_callers_signals_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ignoring SIGTERM is for the gate's own process: a disposition set to ignore is
    inherited by every child the caller starts later, which then cannot be stopped."""
    import signal

    from tether.gate import hook

    before = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)}
    monkeypatch.setenv("TETHER_HOME", str(tmp_path))
    hook.main(["tick", "--session", "signals"])
    assert {s: signal.getsignal(s) for s in before} == before
