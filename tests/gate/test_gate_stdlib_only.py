"""The gate imports the standard library, tether.gate.* and tether.core.* only.

Why: docs/explanation/the-gate-hot-path.md. The import-linter contract
``standard_library_only`` checks every import statement; these tests check what
really loads, module by module and on the hook's path.
"""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
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
loaded = {}
for name in sys.argv[1:]:
    before = set(sys.modules)
    importlib.import_module(name)
    loaded[name] = sorted(set(sys.modules) - before)
print(json.dumps(loaded))
"""


def _offenders(modules: list[str]) -> list[str]:
    """The modules that are neither the standard library, the package root, the
    gate nor the core it stands on."""
    return [
        name
        for name in modules
        if name.split(".", 1)[0] not in sys.stdlib_module_names
        and name not in ("tether", "tether.gate", "tether.core")
        and not name.startswith(("tether.gate.", "tether.core."))
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
    # The expensive stdlib modules the hot path avoids on purpose
    # (docs/explanation/the-gate-hot-path.md): json and sqlite3, nothing heavier.
    heavy = ("argparse", "pathlib", "dataclasses", "typing", "tomllib")
    for name in heavy:
        assert name not in seen["run"], name


def gate_modules() -> list[str]:
    """Every module of the gate and the core, found by walking them (never a list kept
    by hand)."""
    import tether.core
    import tether.gate

    return sorted(
        info.name
        for package in (tether.gate, tether.core)
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + ".")
    )


def test_the_walk_finds_every_gate_file() -> None:
    files = {
        f"tether.{package}.{path.stem}"
        for package in ("gate", "core")
        for path in (ROOT / "src" / "tether" / package).glob("*.py")
        if path.stem != "__init__"
    }
    assert files and files <= set(gate_modules())


def test_every_gate_module_is_stdlib_only() -> None:
    """Each module, imported in a fresh interpreter in turn, loads only the standard
    library and the gate (what it loads is charged to the first module that needs it)."""
    modules = gate_modules()
    proc = subprocess.run(
        [sys.executable, "-c", MODULES_PROBE, *modules],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    loaded: dict[str, list[str]] = json.loads(proc.stdout)
    assert sorted(loaded) == modules
    offenders = {name: bad for name, new in loaded.items() if (bad := _offenders(new))}
    assert offenders == {}


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
