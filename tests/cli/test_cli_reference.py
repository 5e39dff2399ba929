"""docs/reference/cli.md is what the commands' --help says, word for word."""

from __future__ import annotations

from pathlib import Path

from tether.cli.docgen import render

PAGE = Path(__file__).resolve().parents[2] / "docs" / "reference" / "cli.md"


def test_cli_reference_matches_the_commands() -> None:
    assert PAGE.read_text(encoding="utf-8") == render(), (
        "docs/reference/cli.md is stale: regenerate it with "
        "`python -m tether.cli.docgen > docs/reference/cli.md`"
    )


def test_every_command_has_a_help_line() -> None:
    text = render()
    for name in ("run", "runs", "report", "events", "session", "hooks", "config", "demo"):
        assert f"`tether {name}`" in text
