"""The gate's exit codes are the project's table (docs/reference/exit-codes.md).

The gate keeps its own constants (importing the table's enum module costs its hot
path an import); this ties each of them, and any later one, to ``ExitCode``.
"""

from __future__ import annotations

import importlib
import pkgutil

import tether.gate
from tether.core.exit_codes import ExitCode
from tether.gate import hook

# the gate's name -> the table's
SAME_AS = {
    "EXIT_OK": ExitCode.OK,
    "EXIT_INTERNAL": ExitCode.INTERNAL_ERROR,
    "EXIT_USAGE": ExitCode.USAGE,
    "EXIT_REFUSED": ExitCode.GATE_REFUSED,
}


def test_each_gate_exit_code_is_the_tables() -> None:
    for name, code in SAME_AS.items():
        assert getattr(hook, name) == code, name


def test_no_gate_module_has_an_exit_code_the_table_does_not_tie() -> None:
    """Every ``EXIT_*`` constant of every gate module is in ``SAME_AS`` with its value."""
    found: dict[str, int] = {}
    for info in pkgutil.walk_packages(tether.gate.__path__, "tether.gate."):
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if name.startswith("EXIT_") and isinstance(value, int):
                found[f"{info.name}.{name}"] = value
    assert found, "the walk found no exit code"
    for where, value in found.items():
        name = where.rsplit(".", 1)[1]
        assert name in SAME_AS, f"{where} is not tied to ExitCode"
        assert value == SAME_AS[name], where
