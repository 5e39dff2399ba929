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


def test_the_command_list_summaries_are_the_commands_own_help() -> None:
    import click

    from tether.cli.main import COMMANDS, SUMMARIES, cli, summary_of

    assert set(SUMMARIES) == set(COMMANDS)
    ctx = click.Context(cli)
    for name in COMMANDS:
        command = cli.get_command(ctx, name)
        assert command is not None and command.help is not None
        for limit in (40, 60, 200):
            assert summary_of(name).get_short_help_str(limit) == (
                command.get_short_help_str(limit)
            ), f"SUMMARIES[{name!r}] differs from the help of `tether {name}`"


def test_the_top_level_help_does_not_import_the_commands() -> None:
    # `tether --help` is the first thing people type: it lists, it does not load.
    import subprocess
    import sys

    probe = (
        "import sys\n"
        "from tether.cli.main import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('tether.cli.') "
        "and m not in ('tether.cli.main',))\n"
        "print(loaded, file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert "Commands:" in done.stdout and "  wiki " in done.stdout
    assert done.stderr.strip() == "[]"
