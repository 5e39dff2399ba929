"""The dashboard costs nothing until it is used, and says what is missing when its extra is."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("starlette", "uvicorn", "anyio", "tether.dashboard", "tether.status", "rich")


def test_the_root_command_and_the_gate_load_none_of_it() -> None:
    probe = (
        "import sys\n"
        "from tether.cli.main import main\n"
        "import tether.gate.hook\n"
        "try:\n"
        "    main(['--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print(sorted(m for m in sys.modules if m.startswith({HEAVY!r})))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert "dashboard" in done.stdout and "status" in done.stdout  # listed in --help
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_without_the_extra_one_line_and_exit_3() -> None:
    probe = (
        "import sys\n"
        "sys.modules['starlette'] = None  # as if the extra were not installed\n"
        "from tether.cli.main import main\n"
        "main(['dashboard', '--port', '0'])\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 3
    assert done.stderr.strip().splitlines() == [
        "tether: error: tether dashboard needs the dashboard extra (starlette, uvicorn): "
        "pip install 'tether[dashboard]'"
    ]
    assert done.stdout == ""
