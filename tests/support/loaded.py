"""What a ``tether`` command imports: it runs in a fresh interpreter, which prints
``sys.modules`` once the command is done. The lean tests use it to keep a command
from loading what its path does not need."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

PROBE = """
import sys
from tether.cli.main import main
try:
    main(sys.argv[2:])
except SystemExit as end:
    assert (end.code or 0) == int(sys.argv[1]), end.code
print("\\nLOADED " + " ".join(sorted(sys.modules)), file=sys.stderr)
"""


def tether_loaded(
    cwd: Path,
    *args: str,
    env: Mapping[str, str] | None = None,
    stdin: str = "",
    exit_code: int = 0,
) -> tuple[str, set[str]]:
    """(the command's stdout, the modules loaded when it was done); it must exit ``exit_code``."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(exit_code), *args],
        cwd=cwd,
        env=None if env is None else dict(env),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    line = done.stderr.strip().splitlines()[-1]
    return done.stdout, set(line.removeprefix("LOADED ").split())
