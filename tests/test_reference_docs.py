"""The reference pages for config, environment and exit codes agree with the code."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tether.config import ProfileSchema, Settings, load_config
from tether.core.errors import ConfigError
from tether.core.exit_codes import ExitCode

# an environment with no user file (so a developer's own ~/.config/tether is not read)
NO_USER = {"TETHER_USER_CONFIG": "/nonexistent/tether.toml"}
DOCS = Path(__file__).resolve().parent.parent / "docs" / "reference"


def _blocks(page: str, lang: str) -> list[str]:
    text = (DOCS / page).read_text(encoding="utf-8")
    fences = re.findall(r"^```(\w*)\n(.*?)^```$", text, flags=re.DOTALL | re.MULTILINE)
    return [body for kind, body in fences if kind == lang]


def _table_keys(page: str) -> list[str]:
    text = (DOCS / page).read_text(encoding="utf-8")
    return re.findall(r"^\| `([^`]+)` \|", text, flags=re.MULTILINE)


def test_exit_code_table_is_the_enum() -> None:
    text = (DOCS / "exit-codes.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| (\d+) \| `([A-Z_]+)` \|", text, flags=re.MULTILINE)
    assert [(int(code), name) for code, name in rows] == [(int(c), c.name) for c in ExitCode]


def test_config_page_documents_every_key_and_variable() -> None:
    keys = _table_keys("config.md")
    assert set(Settings.__struct_fields__) <= set(keys)
    assert set(ProfileSchema.__struct_fields__) <= set(keys)
    text = (DOCS / "config.md").read_text(encoding="utf-8")
    environment = _table_keys("environment.md")
    for name, var in Settings.env_vars.items():
        assert re.search(rf"^\| `{name}` \|.*`{var}`", text, flags=re.MULTILINE), name
        assert var in environment


def test_config_page_defaults_match_the_code() -> None:
    text = (DOCS / "config.md").read_text(encoding="utf-8")
    defaults = Settings()
    for name in ("iteration_limit", "max_iterations_cap", "timeout_seconds", "gate_budget"):
        row = re.search(rf"^\| `{name}` \| `([^`]+)` \|", text, flags=re.MULTILINE)
        assert row is not None, name
        assert float(row.group(1)) == getattr(defaults, name), name


def test_profile_example_loads(tmp_path: Path) -> None:
    (example,) = _blocks("config.md", "toml")
    (tmp_path / "tether.toml").write_text(example, encoding="utf-8")
    config = load_config(env=NO_USER, cwd=tmp_path)
    assert config.default_profile.name == "cheap"
    assert config.profile("cheap").model == "gpt-5-mini"
    assert config.needs_justification("strong")
    assert config.profile("strong").post_run == (("git", "diff", "--stat"), ("make", "check"))


def _message(tmp_path: Path, toml: str, **kwargs: object) -> str:
    (tmp_path / "tether.toml").write_text(toml, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(cwd=tmp_path, **{"env": NO_USER, **kwargs})  # type: ignore[arg-type]
    return str(info.value)


def test_documented_error_messages_are_the_real_ones(tmp_path: Path) -> None:
    (block,) = _blocks("config.md", "text")
    documented = [line for line in block.splitlines() if line]
    produced = [
        _message(tmp_path, '[profiles.cheap]\nharness = "codex"\nmodle = "x"\ndefault = true\n'),
        _message(tmp_path, "iteration_limit = 0\n"),
        _message(tmp_path, '[profiles.cheap]\nharness = "codx"\ndefault = true\n'),
        _message(tmp_path, "", env={**NO_USER, "TETHER_ITERATION_LIMIT": "ten"}),
        _message(tmp_path, "", overrides={"iteration_limit": 500}),
    ]
    assert produced == documented


def test_python_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (block,) = _blocks("config.md", "python")
    namespace: dict[str, object] = {}
    exec(compile(block, "config.md", "exec"), namespace)  # noqa: S102 - our own doc
    assert namespace["profile"] == load_config().default_profile
