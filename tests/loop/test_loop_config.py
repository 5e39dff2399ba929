"""``[loop]``: built-in defaults every project answers, and errors that name the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from tether.config import load_config
from tether.config.loop import LoopSettings, effective_source, parse_duration
from tether.core.errors import ConfigError
from tether.loop.source_setup import build_sources
from tether.loop.sources import CommandSource, FileSource

NO_USER = {"TETHER_USER_CONFIG": "/nonexistent/tether.toml"}


def _load(tmp_path: Path, text: str) -> LoopSettings:
    (tmp_path / "tether.toml").write_text(text, encoding="utf-8")
    return load_config(env=NO_USER, cwd=tmp_path).section("loop", LoopSettings)


def test_the_defaults_are_built_in_sources_every_project_answers(tmp_path: Path) -> None:
    settings = _load(tmp_path, "")
    assert (settings.board, settings.todo_files, settings.guard_interval) == (
        "tickets",
        ["TODO.md"],
        "15m",
    )
    sources = build_sources(settings, tmp_path, {"PATH": "", "HOME": str(tmp_path / "home")})
    assert [(s.role, s.kind) for s in sources] == [
        ("decisions.ledger", "builtin"),
        ("memory.organic", "builtin"),
        ("memory.curated", "builtin"),
        ("user.model", "builtin"),
    ]
    # nothing of them exists in an empty folder, and still each one is answerable
    assert [s.locate().located for s in sources] == [True] * 4
    readings = [s.read(s.locate()) for s in sources]
    assert [(r.ok, r.items, r.note is not None) for r in readings] == [(True, [], True)] * 4


def test_a_source_table_overrides_only_what_it_names(tmp_path: Path) -> None:
    settings = _load(
        tmp_path,
        '[loop.sources."memory.curated"]\n'
        'commands = [["usmc", "working", "--json"], ["usmc", "facts", "--json"]]\n'
        'timeout = "45s"\n'
        '[loop.sources."decisions.ledger"]\npath = "docs/adr"\n'
        '[loop.sources."user.model"]\nconfidence_threshold = 0.8\n',
    )
    curated = effective_source(settings, "memory.curated")
    assert (curated.kind, curated.command, curated.timeout) == ("command", None, "45s")
    assert curated.argvs() == [["usmc", "working", "--json"], ["usmc", "facts", "--json"]]
    ledger = effective_source(settings, "decisions.ledger")
    assert (ledger.kind, ledger.path) == ("files", "docs/adr")  # a folder named: a files source
    model = effective_source(settings, "user.model")
    assert (model.kind, model.confidence_threshold) == ("builtin", 0.8)
    built = build_sources(settings, tmp_path, {"PATH": ""})
    assert isinstance(built[0], FileSource) and not built[0].locate().located  # named, missing
    assert isinstance(built[2], CommandSource)
    # a command source shows the guard its first command (unless it names another)
    assert built[2].fingerprint_command == ("usmc", "working", "--json")


def test_a_builtin_source_takes_no_location(tmp_path: Path) -> None:
    settings = _load(
        tmp_path, '[loop.sources."decisions.ledger"]\nkind = "builtin"\npath = "docs/adr"\n'
    )
    with pytest.raises(ConfigError, match=r'kind = "builtin", which takes no `path`'):
        build_sources(settings, tmp_path, {})


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ('[loop]\nguard_interval = "soon"\n', "`loop.guard_interval`"),
        ("[loop]\ncheck_timeout = 30\n", "`loop.check_timeout`"),
        ("[loop]\nmax_attempts = 0\n", "`loop.max_attempts`"),
        ('[loop]\nbord = "x"\n', "unknown key `loop.bord` (did you mean `loop.board`?)"),
        ('[loop.sources."memory.curatd"]\nkind = "files"\n', "`loop.sources.memory.curatd`"),
        ('[loop.sources."memory.curated"]\nkind = "cmd"\n', "`loop.sources.memory.curated.kind`"),
        (
            '[loop.sources."user.model"]\nconfidence_threshold = 2\n',
            "`loop.sources.user.model.confidence_threshold`",
        ),
        ('[[loop.routines]]\nname = "a b"\ncommand = ["x"]\n', "`loop.routines[0].name`"),
        ('[[loop.routines]]\nname = "x"\n', "`loop.routines[0].command`"),
    ],
)
def test_bad_values_are_config_errors_naming_the_key(tmp_path: Path, text: str, key: str) -> None:
    with pytest.raises(ConfigError) as info:
        _load(tmp_path, text)
    assert key in str(info.value)
    assert info.value.exit_code == 3


def test_a_kind_without_its_location_names_the_missing_key(tmp_path: Path) -> None:
    settings = _load(tmp_path, '[loop.sources."decisions.ledger"]\nkind = "command"\n')
    with pytest.raises(
        ConfigError,
        match=r"`loop\.sources\.decisions\.ledger\.command` \(or `commands`\) is needed",
    ):
        build_sources(settings, tmp_path, {})


@pytest.mark.parametrize(
    ("table", "argvs", "fingerprint"),
    [
        # a command source without a fingerprint command shows the guard its first command
        ('command = ["mem", "working"]', [("mem", "working")], ("mem", "working")),
        ('commands = [["mem", "a"], ["mem", "b"]]', [("mem", "a"), ("mem", "b")], ("mem", "a")),
        (
            'command = ["mem"]\nfingerprint_command = ["mem", "--count"]',
            [("mem",)],
            ("mem", "--count"),
        ),
    ],
)
def test_a_command_source_and_the_fingerprint_that_goes_with_it(
    tmp_path: Path, table: str, argvs: list[tuple[str, ...]], fingerprint: tuple[str, ...]
) -> None:
    settings = _load(tmp_path, f'[loop.sources."memory.organic"]\n{table}\n')
    source = build_sources(settings, tmp_path, {"PATH": ""})[1]
    assert isinstance(source, CommandSource)
    assert list(source.commands) == argvs
    assert source.fingerprint_command == fingerprint


def test_command_and_commands_together_are_refused(tmp_path: Path) -> None:
    settings = _load(
        tmp_path,
        '[loop.sources."memory.curated"]\ncommand = ["a"]\ncommands = [["b"]]\n',
    )
    with pytest.raises(ConfigError, match="both `command` and `commands`"):
        build_sources(settings, tmp_path, {})


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("500ms", 0.5),
        ("90s", 90.0),
        ("15m", 900.0),
        ("2h", 7200.0),
        ("1d", 86400.0),
        ("1.5m", 90.0),
    ],
)
def test_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


def test_a_stronger_loop_profile_without_a_reason_fails_before_any_tick(tmp_path: Path) -> None:
    from tether.loop import open_loop

    (tmp_path / "tether.toml").write_text(
        '[profiles.cheap]\nharness = "scripted"\ndefault = true\n'
        '[profiles.strong]\nharness = "scripted"\nstrength = 3\n'
        '[loop]\nprofile = "strong"\n',
        encoding="utf-8",
    )
    with pytest.raises(ConfigError, match="stronger than the default"):
        open_loop(tmp_path, env={**NO_USER, "TETHER_HOME": str(tmp_path / "h")})
