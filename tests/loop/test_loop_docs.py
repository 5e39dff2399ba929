"""The loop's reference pages agree with the code, and their examples run."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tether.config import load_config
from tether.config.loop import LoopSettings, RoutineCheck, SourceSettings, effective_source
from tether.loop.autonomy import Policy
from tether.loop.builtin import (
    CURATED_MEMORY_FILES,
    DECISION_FOLDERS,
    ORGANIC_MEMORY_FILES,
    USER_MODEL_FOLDER,
)
from tether.loop.example import CONFIG as EXAMPLE_CONFIG
from tether.loop.signal import Signal, render
from tether.loop.source_setup import build_sources
from tether.loop.sources import CommandSource, FileSource, item_from

DOCS = Path(__file__).resolve().parents[2] / "docs"
NO_USER = {"TETHER_USER_CONFIG": "/nonexistent/tether.toml"}


def _blocks(page: Path, lang: str) -> list[str]:
    text = page.read_text(encoding="utf-8")
    fences = re.findall(r"^```(\w*)\n(.*?)^```$", text, flags=re.DOTALL | re.MULTILINE)
    return [body for kind, body in fences if kind == lang]


def _section(page: Path, heading: str) -> str:
    text = page.read_text(encoding="utf-8")
    start = text.index(heading)
    end = text.find("\n## ", start + len(heading))
    return text[start:] if end < 0 else text[start:end]


def test_signal_lines_page_shows_the_real_lines() -> None:
    page = DOCS / "reference" / "signal-lines.md"
    (block,) = _blocks(page, "text")
    since = datetime(2026, 3, 2, 9, 15, 7, tzinfo=UTC)
    assert block.splitlines() == [
        render(Signal.CONTINUE),
        render(Signal.EXHAUSTED),
        render(Signal.BLIND, unavailable=["memory.organic", "memory.curated"]),
        render(Signal.GUARD_EXHAUSTED, since=since),
        render(Signal.GUARD_BLIND, since=since),
        render(Signal.USER_ONLY),
    ]
    rows = re.findall(r"^\| (\d+) \| `([a-z-]+)` \|", page.read_text(), flags=re.MULTILINE)
    assert [(int(code), name) for code, name in rows] == [
        (int(s.exit_code), s.value) for s in Signal
    ]


def _keys(text: str) -> list[str]:
    return re.findall(r"^\| `([a-z_]+)` \|", text, flags=re.MULTILINE)


def test_loop_page_documents_every_key_with_its_default() -> None:
    page = DOCS / "reference" / "loop.md"
    keys = _section(page, "## `[loop]` keys")
    documented = _keys(keys)
    assert documented[: len(LoopSettings.__struct_fields__)] == list(LoopSettings.__struct_fields__)
    rest = documented[len(LoopSettings.__struct_fields__) :]
    split = rest.index("name")
    source_keys, routine_keys = rest[:split], rest[split:]
    assert source_keys == list(SourceSettings.__struct_fields__)
    assert routine_keys == list(RoutineCheck.__struct_fields__)
    defaults = LoopSettings()
    for name in (
        "board",
        "guard_interval",
        "check_timeout",
        "check_interval",
        "source_timeout",
        "max_attempts",
        "max_ticks",
        "stop_hook_max_blocks",
        "follow_up_manual_runs",
        "todo_files",
    ):
        row = re.search(rf"^\| `{name}` \| `([^`]+)` \|", keys, flags=re.MULTILINE)
        assert row is not None, name
        assert json.loads(row.group(1)) == getattr(defaults, name), name
    words = re.search(r"^\| `todo_hold_words` \| (.+?) \|", keys, flags=re.MULTILINE)
    assert words is not None
    assert re.findall(r"`([a-z]+)`", words.group(1)) == defaults.todo_hold_words


def test_loop_page_roles_table_names_the_built_in_places() -> None:
    page = DOCS / "reference" / "loop.md"
    table = _section(page, "### Sources per role")
    settings = LoopSettings()
    places = {
        "decisions.ledger": [f"`{n}/`" for n in DECISION_FOLDERS],
        "memory.organic": [f"`{n}`" for n in ORGANIC_MEMORY_FILES],
        "memory.curated": [f"`{n}`" for n in CURATED_MEMORY_FILES],
        "user.model": [f"`{USER_MODEL_FOLDER}/`"],
    }
    for role, names in places.items():
        assert effective_source(settings, role).kind == "builtin"
        row = next(line for line in table.splitlines() if line.startswith(f"| `{role}` |"))
        assert all(name in row for name in names), (role, row)


def test_loop_page_toml_examples_load(tmp_path: Path) -> None:
    policy_example, profile_example, loop_example, private_example = _blocks(
        DOCS / "reference" / "loop.md", "toml"
    )
    (tmp_path / "tether.toml").write_text(policy_example, encoding="utf-8")
    policy = Policy.from_config(load_config(env=NO_USER, cwd=tmp_path))
    assert policy.protected_branches == ("main", "release")
    assert "payment" not in policy.approval and "licence" in policy.approval
    assert "publish-docs" in policy.commands and "vpn" in policy.session
    (tmp_path / "tether.toml").write_text(profile_example, encoding="utf-8")
    profiles = load_config(env=NO_USER, cwd=tmp_path).profiles
    assert [(p.name, p.default, p.builtin) for p in profiles.values()] == [("cheap", True, False)]
    example = loop_example
    (tmp_path / "tether.toml").write_text(example, encoding="utf-8")
    config = load_config(env=NO_USER, cwd=tmp_path)
    settings = config.section("loop", LoopSettings)
    assert settings.todo_files == ["TODO.md", "docs/AUFGABEN.txt"]
    assert [r.name for r in settings.routines] == ["dependency-audit"]
    sources = build_sources(settings, tmp_path, {"PATH": ""})
    assert [s.kind for s in sources] == ["files", "builtin", "command", "builtin"]
    assert effective_source(settings, "user.model").confidence_threshold == 0.7
    (tmp_path / "tether.toml").write_text(private_example, encoding="utf-8")
    settings = load_config(env=NO_USER, cwd=tmp_path).section("loop", LoopSettings)
    sources = build_sources(settings, tmp_path, {"PATH": ""})
    assert [type(s) for s in sources] == [FileSource, CommandSource, CommandSource, FileSource]
    assert sources[2].fingerprint_command == ("usmc", "working", "--json")  # type: ignore[attr-defined]
    # the loop's own example project asks exactly these tools
    assert private_example.strip() in EXAMPLE_CONFIG


def test_loop_page_json_example_is_a_valid_answer() -> None:
    (example,) = _blocks(DOCS / "reference" / "loop.md", "json")
    data = json.loads(example.replace("…", "finish the docs"))
    items = [item_from(raw, "usmc") for raw in data["items"]]
    assert [i.text for i in items if i] == ["RESUME: finish the parser port", "finish the docs"]


def test_loop_page_python_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tether.toml").write_text("[loop]\n", encoding="utf-8")
    (block,) = _blocks(DOCS / "reference" / "loop.md", "python")
    namespace: dict[str, object] = {}
    exec(compile(block, "loop.md", "exec"), namespace)  # noqa: S102 - our own doc
    result = namespace["result"]
    # nothing configured, nothing to do: the built-in sources prove it
    assert getattr(result, "signal") is Signal.EXHAUSTED  # noqa: B009


def test_tutorial_config_loads(tmp_path: Path) -> None:
    (example,) = _blocks(DOCS / "tutorial" / "first-loop.md", "toml")
    (tmp_path / "tether.toml").write_text(example, encoding="utf-8")
    settings = load_config(env=NO_USER, cwd=tmp_path).section("loop", LoopSettings)
    assert effective_source(settings, "decisions.ledger").path == "docs/decisions"
    assert effective_source(settings, "memory.organic").command == ["my-notes", "--new", "--json"]
