"""DBOS and SQLAlchemy load only for fleet commands: never for --help, nor on the gate's path."""

from __future__ import annotations

import subprocess
import sys


def _loaded_after(code: str) -> set[str]:
    probe = (
        "import sys\n"
        f"{code}\n"
        "print(' '.join(m for m in ('dbos', 'sqlalchemy', 'psycopg') if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    return set(done.stdout.split())


def test_help_and_gate_do_not_load_the_engine() -> None:
    help_code = (
        "import contextlib, io\n"
        "from tether.cli.main import cli\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n        cli.main(['--help'], standalone_mode=False)\n"
        "    except SystemExit:\n        pass"
    )
    assert _loaded_after(help_code) == set()
    assert _loaded_after("import tether.gate.hook") == set()


def test_fleet_command_loads_it() -> None:
    assert "dbos" in _loaded_after("import tether.fleet.engine")
