"""The watch reference agrees with the code: every key and default, every command and flag."""

from __future__ import annotations

import json
import re
from pathlib import Path

import click
import pytest

from tether.cli.subagents import subagents
from tether.cli.watch import watch
from tether.config import load_config
from tether.config.schema import WatchSettings

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGE = DOCS / "reference" / "watch.md"


def _toml_value(value: object) -> str:
    if value is None:
        return "unset"
    if isinstance(value, float):
        return repr(value)
    return json.dumps(value)


def test_every_watch_key_is_documented_with_its_default() -> None:
    text = PAGE.read_text("utf-8")
    rows = dict(re.findall(r"^\| `([a-z_]+)` \| `?([^|`]+)`? \|", text, flags=re.MULTILINE))
    defaults = WatchSettings()
    for name in WatchSettings.__struct_fields__:
        assert name in rows, name
        assert rows[name] == _toml_value(getattr(defaults, name)), name


def test_the_config_example_loads(tmp_path: Path) -> None:
    text = PAGE.read_text("utf-8")
    (example,) = re.findall(r"^```toml\n(.*?)^```$", text, flags=re.DOTALL | re.MULTILINE)
    (tmp_path / "tether.toml").write_text(example, encoding="utf-8")
    config = load_config(env={"TETHER_USER_CONFIG": "/nonexistent.toml"}, cwd=tmp_path)
    section = config.section("watch", WatchSettings)
    assert (section.interval, section.tmux_socket) == (30.0, "work")
    assert section.wake_command == ["notify-me", "--title", "tether", "{message}"]


@pytest.mark.parametrize("group", [watch, subagents], ids=["watch", "subagents"])
def test_every_command_and_flag_is_in_the_synopsis(group: click.Group) -> None:
    text = PAGE.read_text("utf-8")
    synopsis = text.split("```", 2)[1]
    for name, command in group.commands.items():
        assert f"tether {group.name} {name}" in synopsis, name
        for param in command.params:
            for flag in getattr(param, "opts", []):
                if flag.startswith("--") and flag != "--help":
                    assert flag in synopsis, f"{name} {flag}"
    for param in group.params:
        for flag in getattr(param, "opts", []):
            assert flag in synopsis, flag


@pytest.mark.parametrize(
    "page", ["reference/watch.md", "how-to/watch-subagents.md", "explanation/the-wake-invariant.md"]
)
def test_links_point_at_pages_that_exist(page: str) -> None:
    path = DOCS / page
    for target in re.findall(r"\]\(([^)#]+\.md)\)", path.read_text("utf-8")):
        assert (path.parent / target).is_file(), target


def test_every_notification_type_the_watchdog_knows_is_documented() -> None:
    from tether.watch import confirm

    text = PAGE.read_text("utf-8")
    documented = [
        set(re.findall(r"`(\w+)`", line.split("|")[1].split("of type", 1)[1]))
        for line in text.splitlines()
        if line.startswith("   | ") and "of type" in line.split("|")[1]
    ]
    assert documented == [
        confirm.PERMISSION_NOTIFICATIONS,
        confirm.INPUT_NOTIFICATIONS,
        confirm.INFO_NOTIFICATIONS,
    ]
