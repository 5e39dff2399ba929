"""The mcp SDK is loaded by `tether mcp` only: not by `tether --help`, nor by other commands."""

from __future__ import annotations

import subprocess
import sys

PROBE = """
import sys
from tether.cli.main import cli
try:
    cli.main(args={args!r}, prog_name="tether", standalone_mode=False)
except SystemExit:
    pass
print(sorted(m for m in sys.modules if m == "mcp" or m.startswith(("mcp.", "mcp_types"))))
"""


def _loaded(args: list[str]) -> str:
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(args=args)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout.strip().splitlines()[-1]


def test_help_and_the_mcp_groups_help_do_not_import_the_sdk() -> None:
    assert _loaded(["--help"]) == "[]"
    assert _loaded(["mcp", "--help"]) == "[]"
    assert _loaded(["mcp", "install", "--help"]) == "[]"
    assert _loaded(["skills", "--help"]) == "[]"


def test_the_harness_choices_are_the_libraries_lists() -> None:
    from tether.cli import mcp as mcp_cli
    from tether.cli import skills as skills_cli
    from tether.cli.mcp_server.install import MCP_HARNESSES
    from tether.skills import HARNESSES

    assert skills_cli.HARNESS_NAMES == HARNESSES
    assert mcp_cli.HARNESS_NAMES == MCP_HARNESSES
