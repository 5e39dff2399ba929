"""The end lines: one per kind of unit that still waits, and bad settings refused before a move."""

from __future__ import annotations

import subprocess
from pathlib import Path

import msgspec
import pytest
from tests.ingest.test_queue import TETHER, _env, _sources

from tether.config.schema import END_LINE_LANGUAGES, WikiSettings
from tether.core.errors import ConfigError
from tether.ingest.lines import BUNDLES, ENTRIES, TEMPLATES, end_lines, templates
from tether.ingest.queue import Queue
from tether.wiki.layout import Wiki

ENTRIES_LINE = "{n} more entries wait in incoming/. Next: /clear, then ingest."
BUNDLES_LINE = "{n} more bundles changed. Next: /clear, then update the captured repositories"


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    root = tmp_path / "kb"
    (root / "wiki").mkdir(parents=True)
    return root


def run(kb: Path, *args: str, session: str = "s") -> subprocess.CompletedProcess[str]:
    """`tether ARGS` started in the wiki folder (so its tether.toml applies)."""
    return subprocess.run(
        [TETHER, *args],
        cwd=kb,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=_env(TETHER_SESSION_ID=session),
    )


def _sources_and_a_bundle(kb: Path, tmp_path: Path) -> None:
    queue = Queue(Wiki.open(kb))
    for path in _sources(tmp_path, 3):
        queue.collect(path)
    queue.release(sorted(e.id for e in queue.quarantined()))
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "README.md").write_text("# Repo\n")
    queue.collect(repo)
    queue.release(["repo"])  # released last: ingested last


def _line(template: str, n: int) -> str:
    return template.replace("{n}", str(n))


@pytest.mark.slow
def test_end_names_what_waits_of_every_kind(kb: Path, tmp_path: Path) -> None:
    _sources_and_a_bundle(kb, tmp_path)
    outputs = []
    for k in range(4):
        assert run(kb, "ingest", "next", session=f"s-{k}").returncode == 0
        end = run(kb, "ingest", "end", session=f"s-{k}")
        assert end.returncode == 0, end.stderr
        outputs.append(end.stdout)
    assert outputs == [
        f"{_line(ENTRIES_LINE, 2)}\n{_line(BUNDLES_LINE, 1)}\n",
        f"{_line(ENTRIES_LINE, 1)}\n{_line(BUNDLES_LINE, 1)}\n",
        f"{_line(BUNDLES_LINE, 1)}\n",  # only the bundle waits: its line, not silence
        "",  # the bundle was the last: nothing waits, no line
    ]


def test_a_bundle_run_names_the_sources_that_wait(kb: Path, tmp_path: Path) -> None:
    queue = Queue(Wiki.open(kb))
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "README.md").write_text("# Repo\n")
    queue.collect(repo)
    queue.release(["repo"])
    for path in _sources(tmp_path, 2):
        queue.collect(path)
    queue.release(sorted(e.id for e in queue.quarantined()))
    assert run(kb, "ingest", "next").returncode == 0
    end = run(kb, "ingest", "end")
    assert end.stdout == f"{_line(ENTRIES_LINE, 2)}\n"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("toml", "key"),
    [
        ('[wiki]\nlanguage = "fr"\n', "wiki.language"),
        ('[wiki]\nentries_line = "more wait, clear first"\n', "wiki.entries_line"),
        ('[wiki]\nbundles_line = "bundles changed"\n', "wiki.bundles_line"),
    ],
)
def test_a_bad_line_setting_is_refused_before_the_entry_moves(
    kb: Path, tmp_path: Path, toml: str, key: str
) -> None:
    queue = Queue(Wiki.open(kb))
    for path in _sources(tmp_path, 2):
        queue.collect(path)
    queue.release(sorted(e.id for e in queue.quarantined()))
    assert run(kb, "ingest", "next").returncode == 0
    (kb / "tether.toml").write_text(toml)
    end = run(kb, "ingest", "end")
    assert end.returncode == 3, end.stderr
    assert f"`{key}`" in end.stderr
    assert (kb / "incoming" / ".claimed" / "source-0.md").is_dir()  # nothing moved
    assert not (kb / "incoming" / ".done").exists()
    checked = run(kb, "config", "check")
    assert checked.returncode == 3
    assert f"`{key}`" in checked.stderr
    # fixed, the same session ends its claim and gets its line
    (kb / "tether.toml").unlink()
    again = run(kb, "ingest", "end")
    assert (again.returncode, again.stdout) == (0, f"{_line(ENTRIES_LINE, 1)}\n")


def test_another_language_with_both_templates_is_accepted(kb: Path, tmp_path: Path) -> None:
    queue = Queue(Wiki.open(kb))
    for path in _sources(tmp_path, 2):
        queue.collect(path)
    queue.release(sorted(e.id for e in queue.quarantined()))
    (kb / "tether.toml").write_text(
        '[wiki]\nlanguage = "fr"\nentries_line = "{n} entrées attendent. Ensuite : /clear."\n'
        'bundles_line = "{n} bundles ont changé. Ensuite : /clear."\n'
    )
    assert run(kb, "config", "check").returncode == 0
    assert run(kb, "ingest", "next").returncode == 0
    assert run(kb, "ingest", "end").stdout == "1 entrées attendent. Ensuite : /clear.\n"


def test_settings_are_checked_when_read() -> None:
    with pytest.raises(msgspec.ValidationError, match=r'`wiki\.language` = "fr"'):
        msgspec.convert({"language": "fr"}, WikiSettings)
    with pytest.raises(msgspec.ValidationError, match=r"`wiki\.entries_line`"):
        msgspec.convert({"entries_line": "no count"}, WikiSettings)
    with pytest.raises(ConfigError) as caught:
        templates("fr")
    assert caught.value.key == "wiki.language"
    with pytest.raises(ConfigError) as caught:
        templates("en", bundles_line="none")
    assert caught.value.key == "wiki.bundles_line"


def test_end_lines_in_order_and_the_languages_agree() -> None:
    chosen = templates()
    assert end_lines({BUNDLES: 2, ENTRIES: 1}, chosen) == [
        _line(ENTRIES_LINE, 1),
        _line(BUNDLES_LINE, 2),
    ]
    assert end_lines({ENTRIES: 0, BUNDLES: 0}, chosen) == []
    assert sorted(TEMPLATES) == sorted(END_LINE_LANGUAGES)
