from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

import msgspec
import pytest

from tether.config import (
    BUILTIN_PROFILE,
    SECTIONS,
    Config,
    Profile,
    Section,
    check_layer,
    load_config,
)
from tether.core.errors import BudgetError, ConfigError, UnknownNameError
from tether.core.exit_codes import ExitCode


@pytest.fixture
def layout(tmp_path: Path) -> dict[str, Path]:
    """A project with a nested working folder and a user config file location."""
    project = tmp_path / "project"
    work = project / "src" / "deep"
    work.mkdir(parents=True)
    return {
        "project": project,
        "work": work,
        "project_file": project / "tether.toml",
        "user_file": tmp_path / "user" / "tether.toml",
    }


def _env(layout: dict[str, Path], **extra: str) -> dict[str, str]:
    return {"TETHER_USER_CONFIG": str(layout["user_file"]), **extra}


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _load(
    layout: dict[str, Path],
    env: Mapping[str, str] | None = None,
    overrides: Mapping[str, object] | None = None,
) -> Config:
    return load_config(overrides=overrides, env=env or _env(layout), cwd=layout["work"])


# --- defaults and discovery --------------------------------------------------------


def test_defaults_on_a_fresh_machine(layout: dict[str, Path]) -> None:
    config = _load(layout)
    assert config.project_root == layout["work"]
    assert config.home == layout["work"] / ".tether"
    assert config.iteration_limit == 20
    assert config.max_iterations_cap == 200
    assert config.tool_call_limit is None
    assert config.timeout_seconds == 3600.0
    assert config.kill_grace_seconds == 3.0
    assert config.gate_budget == 60
    assert config.project_file is None and config.user_file is None
    assert list(config.profiles) == ["scripted"]
    default = config.default_profile
    assert default is BUILTIN_PROFILE
    assert default.harness == "scripted"
    assert default.args == ("--format", "claude-code", "--steps", "5")
    assert default.strength == 1
    assert config.sources["profiles.scripted"] == "default"
    assert all(item["source"] == "default" for item in config.as_dict()["settings"].values())


def test_project_file_found_in_nearest_parent(layout: dict[str, Path]) -> None:
    _write(layout["project_file"], "iteration_limit = 7\n")
    config = _load(layout)
    assert config.project_root == layout["project"]
    assert config.project_file == layout["project_file"]
    assert config.home == layout["project"] / ".tether"
    assert config.iteration_limit == 7
    assert config.sources["iteration_limit"] == f"project:{layout['project_file']}"


def test_user_file_location_falls_back_to_xdg_then_home(tmp_path: Path) -> None:
    xdg_file = _write(tmp_path / "xdg" / "tether" / "tether.toml", "gate_budget = 5\n")
    home_file = _write(tmp_path / "h" / ".config" / "tether" / "tether.toml", "gate_budget = 6\n")
    cwd = tmp_path / "elsewhere"
    cwd.mkdir()
    env = {"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "HOME": str(tmp_path / "h")}
    config = load_config(env=env, cwd=cwd)
    assert config.gate_budget == 5
    assert config.sources["gate_budget"] == f"user:{xdg_file}"
    config = load_config(env={"HOME": str(tmp_path / "h")}, cwd=cwd)
    assert config.gate_budget == 6
    assert config.user_file == home_file


# --- precedence, one layer at a time ---------------------------------------------


def test_each_layer_overrides_the_one_below(layout: dict[str, Path]) -> None:
    _write(layout["user_file"], "iteration_limit = 11\ntimeout_seconds = 11\ngate_budget = 11\n")
    _write(layout["project_file"], "iteration_limit = 12\ntimeout_seconds = 12\n")
    env = _env(layout, TETHER_ITERATION_LIMIT="13")
    config = _load(layout, env=env, overrides={"iteration_limit": 14})
    user, project = f"user:{layout['user_file']}", f"project:{layout['project_file']}"

    assert (config.iteration_limit, config.sources["iteration_limit"]) == (14, "flag")
    assert (config.timeout_seconds, config.sources["timeout_seconds"]) == (12.0, project)
    assert (config.gate_budget, config.sources["gate_budget"]) == (11, user)
    assert config.max_iterations_cap == 200 and "max_iterations_cap" not in config.sources

    config = _load(layout, env=env)
    assert (config.iteration_limit, config.sources["iteration_limit"]) == (
        13,
        "env:TETHER_ITERATION_LIMIT",
    )
    layout["project_file"].unlink()
    config = _load(layout, env=_env(layout))
    assert (config.iteration_limit, config.sources["iteration_limit"]) == (11, user)
    layout["user_file"].unlink()
    assert _load(layout).iteration_limit == 20


def test_every_environment_variable_is_read(layout: dict[str, Path]) -> None:
    env = _env(
        layout,
        TETHER_HOME="state",
        TETHER_ITERATION_LIMIT="5",
        TETHER_MAX_ITERATIONS_CAP="50",
        TETHER_TOOL_CALL_LIMIT="9",
        TETHER_TIMEOUT="2.5",
        TETHER_GATE_BUDGET="33",
    )
    config = _load(layout, env=env)
    assert config.home == layout["work"] / "state"
    assert config.iteration_limit == 5
    assert config.max_iterations_cap == 50
    assert config.tool_call_limit == 9
    assert config.timeout_seconds == 2.5
    assert config.gate_budget == 33
    assert config.sources["home"] == "env:TETHER_HOME"
    assert config.sources["timeout_seconds"] == "env:TETHER_TIMEOUT"


def test_empty_environment_variable_counts_as_unset(layout: dict[str, Path]) -> None:
    config = _load(layout, env=_env(layout, TETHER_ITERATION_LIMIT="", TETHER_HOME=" "))
    assert config.iteration_limit == 20
    assert config.home == layout["work"] / ".tether"


def test_flag_none_means_not_given(layout: dict[str, Path]) -> None:
    _write(layout["project_file"], "timeout_seconds = 9\n")
    config = _load(layout, overrides={"timeout_seconds": None, "home": "/srv/t"})
    assert config.timeout_seconds == 9.0
    assert config.home == Path("/srv/t")
    assert config.sources["home"] == "flag"


def test_home_in_a_file_is_relative_to_that_file(layout: dict[str, Path]) -> None:
    _write(layout["project_file"], 'home = "var/tether"\n')
    assert _load(layout).home == layout["project"] / "var" / "tether"


def test_tether_home_from_the_test_fixture_is_used_by_default(tether_home: Path) -> None:
    assert load_config().home == tether_home


# --- profiles ----------------------------------------------------------------------

CHEAP = """
[profiles.cheap]
harness = "codex"
model = "gpt-5-mini"
args = ["--skip-git-repo-check"]
env = { SOME_VAR = "x" }
iteration_limit = 20
default = true
post_run = [["git", "status"], ["true"]]
"""


def test_profile_shape_from_the_issue(layout: dict[str, Path]) -> None:
    _write(layout["project_file"], CHEAP)
    config = _load(layout)
    cheap = config.profile("cheap")
    assert cheap == Profile(
        name="cheap",
        harness="codex",
        model="gpt-5-mini",
        args=("--skip-git-repo-check",),
        env={"SOME_VAR": "x"},
        iteration_limit=20,
        default=True,
        strength=1,
        post_run=(("git", "status"), ("true",)),
    )
    assert config.default_profile is cheap
    assert "scripted" not in config.profiles  # the built-in only exists when nothing is set


def test_profiles_merge_by_name_project_wins(layout: dict[str, Path]) -> None:
    _write(
        layout["user_file"],
        '[profiles.cheap]\nharness = "pi"\ndefault = true\n'
        '[profiles.strong]\nharness = "claude-code"\nstrength = 3\n',
    )
    _write(layout["project_file"], '[profiles.strong]\nharness = "codex"\nstrength = 2\n')
    config = _load(layout)
    assert sorted(config.profiles) == ["cheap", "strong"]
    assert config.profile("strong").harness == "codex"
    assert config.profile("strong").strength == 2
    assert config.sources["profiles.strong"] == f"project:{layout['project_file']}"
    assert config.sources["profiles.cheap"] == f"user:{layout['user_file']}"
    assert config.default_profile.name == "cheap"
    assert config.needs_justification("strong")
    assert not config.needs_justification("cheap")


def test_project_default_replaces_user_default(layout: dict[str, Path]) -> None:
    _write(layout["user_file"], '[profiles.mine]\nharness = "pi"\ndefault = true\n')
    _write(layout["project_file"], '[profiles.team]\nharness = "codex"\ndefault = true\n')
    config = _load(layout)
    assert config.default_profile.name == "team"
    assert not config.profile("mine").default


def test_unknown_profile_names_the_known_ones(layout: dict[str, Path]) -> None:
    _write(layout["project_file"], CHEAP)
    with pytest.raises(UnknownNameError) as info:
        _load(layout).profile("chaep")
    assert info.value.exit_code == ExitCode.CONFIG
    assert "unknown profile 'chaep'" in str(info.value)
    assert "Did you mean 'cheap'?" in str(info.value)
    assert "Known: cheap." in str(info.value)


def test_no_default_profile_is_an_error(layout: dict[str, Path]) -> None:
    _write(layout["project_file"], '[profiles.a]\nharness = "pi"\n[profiles.b]\nharness = "pi"\n')
    with pytest.raises(ConfigError, match=r"no default profile among a, b"):
        _load(layout)


def test_two_defaults_in_one_file_is_an_error(layout: dict[str, Path]) -> None:
    _write(
        layout["project_file"],
        '[profiles.a]\nharness = "pi"\ndefault = true\n'
        '[profiles.b]\nharness = "pi"\ndefault = true\n',
    )
    with pytest.raises(ConfigError, match=r"profiles `a` and `b` are all marked `default = true`"):
        _load(layout)


def test_default_profile_property_checks_a_hand_built_config(tmp_path: Path) -> None:
    two = {n: Profile(name=n, harness="pi", default=True) for n in ("x", "y")}
    with pytest.raises(ConfigError, match="x and y are all marked"):
        Config(project_root=tmp_path, home=tmp_path, profiles=two).default_profile  # noqa: B018
    none = {"x": Profile(name="x", harness="pi")}
    with pytest.raises(ConfigError, match="no default profile among x"):
        Config(project_root=tmp_path, home=tmp_path, profiles=none).default_profile  # noqa: B018


def test_unknown_harness_is_named_with_its_key(layout: dict[str, Path]) -> None:
    _write(layout["project_file"], '[profiles.cheap]\nharness = "codx"\ndefault = true\n')
    with pytest.raises(ConfigError) as info:
        _load(layout)
    message = str(info.value)
    assert "`profiles.cheap.harness`: unknown harness 'codx'" in message
    assert "Did you mean 'codex'?" in message
    assert info.value.key == "profiles.cheap.harness"


# --- bad keys, bad types, bad environment ----------------------------------------


def _error(layout: dict[str, Path], text: str) -> ConfigError:
    _write(layout["project_file"], text)
    with pytest.raises(ConfigError) as info:
        _load(layout)
    assert info.value.exit_code == ExitCode.CONFIG
    return info.value


def test_misspelled_profile_key_names_key_and_file(layout: dict[str, Path]) -> None:
    error = _error(layout, '[profiles.cheap]\nharness = "codex"\nmodle = "x"\ndefault = true\n')
    assert str(error).startswith(f"{layout['project_file']}: unknown key `profiles.cheap.modle`")
    assert "did you mean `profiles.cheap.model`?" in str(error)
    assert error.key == "profiles.cheap.modle"
    assert error.path == str(layout["project_file"])


def test_file_in_the_working_folder_is_named_relatively(tmp_path: Path) -> None:
    _write(tmp_path / "tether.toml", "iteraton_limit = 3\n")
    with pytest.raises(ConfigError) as info:
        load_config(env={"TETHER_USER_CONFIG": str(tmp_path / "none.toml")}, cwd=tmp_path)
    assert str(info.value) == (
        "tether.toml: unknown key `iteraton_limit` (did you mean `iteration_limit`?)"
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("iteration_limit = 0", "`iteration_limit`: expected an integer >= 1, got 0"),
        ('iteration_limit = "5"', '`iteration_limit`: expected an integer, got "5"'),
        ("timeout_seconds = true", "`timeout_seconds`: expected a number, got true"),
        ("gate_budget = 1.5", "`gate_budget`: expected an integer, got 1.5"),
        ("[wikki]\npages = 3", "unknown key `wikki`"),
        ("[wiki]\npages = 3", "unknown key `wiki.pages`"),
        ("profiles = 3", "`profiles` must be a table"),
        ('[profiles.a]\nmodel = "m"', "missing required key `profiles.a.harness`"),
        ('[profiles.a]\nharness = "pi"\nargs = "-v"', "`profiles.a.args`: expected a list, got"),
        (
            '[profiles.a]\nharness = "pi"\nargs = ["-v", 2]',
            "`profiles.a.args[1]`: expected a string, got 2",
        ),
        (
            '[profiles.a]\nharness = "pi"\nenv = { X = 1 }',
            "`profiles.a.env.X`: expected a string, got 1",
        ),
        (
            '[profiles.a]\nharness = "pi"\nenv = { TETHER_RUN_ID = "x" }',
            "`profiles.a.env.TETHER_RUN_ID`: TETHER_RUN_ID is set by tether for every run",
        ),
        (
            '[profiles.a]\nharness = "pi"\npost_run = [[]]',
            "`profiles.a.post_run[0]`: expected a list of length >= 1",
        ),
        ('[profiles."a b"]\nharness = "pi"', "profile name 'a b' is not allowed"),
        ("iteration_limit = 3\niteration_limit = 4", "invalid TOML: Cannot overwrite a value"),
    ],
)
def test_bad_values_name_the_key(layout: dict[str, Path], text: str, expected: str) -> None:
    error = _error(layout, text + "\n")
    assert str(error).startswith(f"{layout['project_file']}: ")
    assert expected in str(error)


def test_check_layer_lists_every_problem(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "t.toml",
        'iteration_limt = 3\n[lop]\n[profiles.a]\nharness = "codx"\n'
        '[profiles.b]\nharness = "pi"\nmodel = 3\n',
    )
    _, problems = check_layer(path, "project", "t.toml")
    assert [str(p) for p in problems] == [
        "t.toml: unknown key `iteration_limt` (did you mean `iteration_limit`?)",
        "t.toml: unknown key `lop` (did you mean `loop`?)",
        "t.toml: `profiles.a.harness`: unknown harness 'codx'. Did you mean 'codex'? "
        "Known: claude-code, codex, copilot, pi, scripted, vibe.",
        "t.toml: `profiles.b.model`: expected a string, got 3",
    ]


@pytest.mark.parametrize(
    ("var", "value", "expected"),
    [
        ("TETHER_ITERATION_LIMIT", "ten", "TETHER_ITERATION_LIMIT='ten': expected an integer"),
        ("TETHER_ITERATION_LIMIT", "0", "TETHER_ITERATION_LIMIT='0': expected an integer >= 1"),
        ("TETHER_TIMEOUT", "-1", "TETHER_TIMEOUT='-1': expected a number > 0.0"),
        ("TETHER_GATE_BUDGET", "1.5", "TETHER_GATE_BUDGET='1.5': expected an integer"),
        ("TETHER_MAX_ITERATIONS_CAP", "x", "TETHER_MAX_ITERATIONS_CAP='x'"),
        ("TETHER_TOOL_CALL_LIMIT", "many", "TETHER_TOOL_CALL_LIMIT='many'"),
    ],
)
def test_bad_environment_names_the_variable(
    layout: dict[str, Path], var: str, value: str, expected: str
) -> None:
    with pytest.raises(ConfigError) as info:
        _load(layout, env=_env(layout, **{var: value}))
    assert str(info.value).startswith(f"environment variable {expected}")
    assert "fix or unset it" in str(info.value)


def test_bad_flag_values_and_unknown_flags(layout: dict[str, Path]) -> None:
    with pytest.raises(ConfigError, match=r"flag value for `timeout_seconds`: expected a number"):
        _load(layout, overrides={"timeout_seconds": 0})
    with pytest.raises(ConfigError, match=r"unknown setting `iterations` given as a flag"):
        _load(layout, overrides={"iterations": 3})


def test_limits_above_the_cap_are_refused(layout: dict[str, Path]) -> None:
    with pytest.raises(BudgetError) as info:
        _load(layout, overrides={"iteration_limit": 500})
    assert str(info.value) == (
        "iteration_limit 500 (from flag) is above max_iterations_cap 200 (from default); "
        "lower the limit or raise the cap."
    )
    _write(
        layout["project_file"],
        'max_iterations_cap = 30\n[profiles.a]\nharness = "pi"\ndefault = true\n'
        "iteration_limit = 40\n",
    )
    with pytest.raises(BudgetError, match=r"profiles.a.iteration_limit 40 .* above max_iter"):
        _load(layout)


# --- sections: adding one is one struct --------------------------------------------


class _LoopSettings(Section, frozen=True):
    guard_interval_seconds: float = 900.0
    sources: list[str] = []  # noqa: RUF012 - msgspec copies empty defaults
    env_vars: ClassVar[Mapping[str, str]] = {"guard_interval_seconds": "TETHER_GUARD_INTERVAL"}


def test_a_registered_section_is_layered_like_the_rest(
    layout: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(SECTIONS, "loop", _LoopSettings)
    assert _load(layout).section("loop", _LoopSettings).guard_interval_seconds == 900.0
    _write(layout["project_file"], '[loop]\nguard_interval_seconds = 60\nsources = ["a"]\n')
    config = _load(layout)
    assert config.section("loop", _LoopSettings) == _LoopSettings(
        guard_interval_seconds=60.0, sources=["a"]
    )
    assert config.sources["loop.sources"] == f"project:{layout['project_file']}"
    config = _load(layout, env=_env(layout, TETHER_GUARD_INTERVAL="30"))
    assert config.section("loop", _LoopSettings).guard_interval_seconds == 30.0
    assert config.as_dict()["settings"]["loop.guard_interval_seconds"] == {
        "value": 30.0,
        "source": "env:TETHER_GUARD_INTERVAL",
    }
    config = _load(layout, overrides={"loop.guard_interval_seconds": 5})
    assert config.section("loop", _LoopSettings).guard_interval_seconds == 5.0
    error = _error(layout, "[loop]\nguard_intervall_seconds = 1\n")
    assert "unknown key `loop.guard_intervall_seconds`" in str(error)
    assert "did you mean `loop.guard_interval_seconds`?" in str(error)


def test_sections_are_plain_msgspec_structs() -> None:
    assert issubclass(SECTIONS[""], msgspec.Struct)


# --- the CLI ---------------------------------------------------------------------------


def _tether(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tether.cli.main", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=dict(os.environ),
        check=False,
    )


def test_config_show_json_reports_sources(tmp_path: Path) -> None:
    project_file = _write(tmp_path / "tether.toml", "gate_budget = 7\n" + CHEAP)
    result = _tether("config", "show", "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["settings"]["gate_budget"] == {"value": 7, "source": f"project:{project_file}"}
    assert data["settings"]["home"]["source"] == "env:TETHER_HOME"
    assert data["settings"]["iteration_limit"] == {"value": 20, "source": "default"}
    assert data["default_profile"] == "cheap"
    assert data["profiles"]["cheap"]["model"] == "gpt-5-mini"
    assert data["profiles"]["cheap"]["source"] == f"project:{project_file}"


def test_config_show_table(tmp_path: Path) -> None:
    result = _tether("config", "show", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "iteration_limit" in result.stdout
    assert "scripted" in result.stdout


def test_config_check_lists_problems_and_exits_3(tmp_path: Path) -> None:
    _write(tmp_path / "tether.toml", CHEAP)
    ok = _tether("config", "check", cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    assert "ok: effective configuration (default profile: cheap)" in ok.stdout
    _write(tmp_path / "bad.toml", 'gate_budget = "x"\n[profiles.p]\nharnes = "pi"\n')
    bad = _tether("config", "check", "bad.toml", cwd=tmp_path)
    assert bad.returncode == ExitCode.CONFIG
    assert 'bad.toml: `gate_budget`: expected an integer, got "x"' in bad.stderr
    assert "bad.toml: unknown key `profiles.p.harnes`" in bad.stderr


def test_config_show_with_a_bad_env_exits_3(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TETHER_GATE_BUDGET", "lots")
    result = _tether("config", "show", cwd=tmp_path)
    assert result.returncode == ExitCode.CONFIG
    assert "environment variable TETHER_GATE_BUDGET='lots'" in result.stderr


def test_config_import_stays_light() -> None:
    code = (
        "import sys, tether.config; "
        "print(','.join(m for m in ('rich', 'click', 'pydantic') if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == ""


def test_a_kept_configuration_is_read_again_when_its_file_or_environment_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tether.config import loader

    monkeypatch.setattr(loader, "_kept", None)
    project = tmp_path / "p"
    project.mkdir()
    config_file = project / "tether.toml"
    config_file.write_text("iteration_limit = 5\n", encoding="utf-8")
    env = {"TETHER_USER_CONFIG": str(tmp_path / "none.toml")}
    assert load_config(env=env, cwd=project) is not load_config(env=env, cwd=project)
    loader.keep_loaded()
    first = load_config(env=env, cwd=project)
    assert load_config(env=env, cwd=project) is first
    assert load_config(env=env, cwd=project / "sub") is not first  # another folder
    config_file.write_text("iteration_limit = 7\n", encoding="utf-8")
    assert load_config(env=env, cwd=project).iteration_limit == 7
    assert load_config(env={**env, "TETHER_ITERATION_LIMIT": "9"}, cwd=project).iteration_limit == 9
    # flags are never answered from memory
    flagged = load_config({"iteration_limit": 3}, env=env, cwd=project)
    assert flagged.iteration_limit == 3
    assert load_config(env=env, cwd=project).iteration_limit == 7
