"""The layers of ARCHITECTURE.md hold: ``lint-imports`` keeps every contract in pyproject.toml."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_import_linter_contract_is_kept() -> None:
    lint_imports = Path(sys.executable).parent / "lint-imports"
    done = subprocess.run(
        [str(lint_imports), "--no-cache", "--config", str(ROOT / "pyproject.toml")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Contracts: 7 kept, 0 broken." in done.stdout, done.stdout


PROBE_CONFIG = """\
[tool.importlinter]
root_package = "probe_pkg"
include_external_packages = true
contract_types = ["standard_library_only: tests.import_contracts.StandardLibraryOnlyContract"]

[[tool.importlinter.contracts]]
name = "probe gate"
type = "standard_library_only"
source_module = "probe_pkg.gate"
allowed_modules = ["probe_pkg"]
"""


def test_the_standard_library_contract_sees_every_import_statement(tmp_path: Path) -> None:
    """An import inside a function, of an installed distribution or of a sibling
    package, each breaks the contract; the standard library and the package root do not."""
    gate = tmp_path / "probe_pkg" / "gate"
    gate.mkdir(parents=True)
    (tmp_path / "probe_pkg" / "__init__.py").write_text("VERSION = '1'\n")
    (tmp_path / "probe_pkg" / "other.py").write_text("X = 1\n")
    (gate / "__init__.py").write_text("import json\nimport probe_pkg\n")
    (gate / "lazy.py").write_text("def later() -> None:\n    import yaml  # noqa\n")
    (gate / "sibling.py").write_text("from probe_pkg import other\n")
    (tmp_path / "pyproject.toml").write_text(PROBE_CONFIG)
    done = subprocess.run(
        [str(Path(sys.executable).parent / "lint-imports"), "--no-cache"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}", "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "probe_pkg.gate.lazy (l. 2) imports yaml: installed distribution PyYAML" in done.stdout
    assert "probe_pkg.gate.sibling (l. 1) imports probe_pkg.other" in done.stdout
    assert "json" not in done.stdout.split("Broken contracts", 1)[1]
