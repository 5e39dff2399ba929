"""The guard sees read failures: availability is the roles that could not be answered.

A source that is located but fails when asked (hangs past its timeout, prints
no JSON, exits non-zero) after an ``exhausted`` makes the next tick ``blind`` at
once — a command source's guard view is its first command, run on every tick
that reaches level 2 — and while it keeps failing the ticks hold as ``guard,
blind`` (exit 13) without reading the other sources. Fixed, it is asked again
at the next tick, which then reads the chain. Changing a source's command in
``tether.toml`` breaks the guard. Real ``tether loop tick`` subprocesses, real
source commands.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from tests.loop.conftest import BASE_TOML, Project, write_script

CURATED_TIMEOUT = """
[loop.sources."memory.curated"]
kind = "command"
command = ["curated-memory", "working", "--json"]
timeout = "1s"
"""


def _counting_script(path: Path, log: Path, output: str, *, exit_code: int, sleep: float) -> None:
    """A source command that notes each start in ``log`` before it answers."""
    path.write_text(
        f"#!{sys.executable}\n"
        "import sys, time\n"
        f"open({str(log)!r}, 'a').write('run\\n')\n"
        f"time.sleep({sleep!r})\n"
        f"sys.stdout.write({output!r})\n"
        f"sys.exit({exit_code})\n",
        encoding="utf-8",
    )
    path.chmod(0o755)


def _runs(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


@pytest.mark.slow
@pytest.mark.parametrize(
    ("output", "exit_code", "sleep", "why"),
    [
        ('{"status": "empty", "items": []}', 0, 30.0, "killed after"),
        ("this is not JSON", 0, 0.0, "output is not JSON"),
        ('{"status": "empty", "items": []}', 3, 0.0, "exit 3"),
    ],
    ids=["hang", "bad-json", "non-zero-exit"],
)
def test_exhausted_then_a_failing_source_is_blind_at_once_then_guard_blind_until_fixed(
    project: Project, output: str, exit_code: int, sleep: float, why: str
) -> None:
    base = BASE_TOML.replace(
        '[loop.sources."memory.curated"]\nkind = "command"\n'
        'command = ["curated-memory", "working", "--json"]\n',
        "",
    )
    project.write_config(CURATED_TIMEOUT, base=base)
    project.all_sources_ready()
    exhausted = project.tether("loop", "tick")
    assert exhausted.returncode == 10, exhausted.stdout + exhausted.stderr

    log = project.root / "curated.log"
    _counting_script(project.bin / "curated-memory", log, output, exit_code=exit_code, sleep=sleep)
    blind = project.tether("loop", "tick")
    assert blind.returncode == 11, blind.stdout
    assert blind.stdout.splitlines()[-1].startswith(
        "TETHER-LOOP: STOP (blind, 1/4 sources unavailable: memory.curated)"
    )
    assert "memory.curated: unavailable (located, but the read failed" in blind.stdout
    assert why in blind.stdout
    asked = _runs(log)
    assert asked >= 1

    held = project.tether("loop", "tick")
    assert held.returncode == 13, held.stdout
    assert held.stdout.splitlines()[-1].startswith("TETHER-LOOP: STOP (guard, blind unchanged")
    assert "availability changed" not in held.stdout
    assert _runs(log) > asked  # asked again: that is how a fix is seen

    # fixed: the very next tick asks it, sees it answer, and reads the chain again
    write_script(project.bin / "curated-memory", {"status": "empty", "items": []})
    fixed = project.tether("loop", "tick")
    assert fixed.returncode == 10, fixed.stdout
    assert "level 2: guard does not hold (availability changed" in fixed.stdout


def test_a_source_without_a_fingerprint_command_that_starts_failing_breaks_the_guard(
    project: Project,
) -> None:
    # memory.organic is a plain command source: its first command is its guard view
    project.all_sources_ready()
    assert project.tether("loop", "tick").returncode == 10
    assert project.tether("loop", "tick").returncode == 12  # guard, exhausted unchanged
    write_script(project.bin / "organic-memory", "not JSON at all")
    broken = project.tether("loop", "tick")
    assert broken.returncode == 11, broken.stdout
    assert "memory.organic: unavailable" in broken.stdout
    assert broken.stdout.splitlines()[-1].startswith(
        "TETHER-LOOP: STOP (blind, 1/4 sources unavailable: memory.organic)"
    )


def test_changing_a_source_command_in_tether_toml_breaks_the_guard(project: Project) -> None:
    project.all_sources_ready()
    assert project.tether("loop", "tick").returncode == 10
    assert project.tether("loop", "tick").returncode == 12  # guard, exhausted unchanged
    write_script(project.bin / "other-notes", {"status": "empty", "items": []})
    toml = project.root / "tether.toml"
    toml.write_text(
        toml.read_text().replace('["organic-memory", "--json"]', '["other-notes", "--json"]')
    )
    again = project.tether("loop", "tick")
    assert again.returncode == 10, again.stdout  # read again, not held
    assert "level 2: guard does not hold (the situation changed)" in again.stdout
    assert "`other-notes --json`" in again.stdout
