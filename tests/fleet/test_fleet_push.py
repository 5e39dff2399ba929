"""Writing a unit's outcome back: rebased when the branch moved, never forced over a person."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tether.fleet.unit import PushConflictError, commit_and_push
from tether.testing.fleet import make_project


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=p", "-c", "user.email=p@localhost", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


def _clone(url: str, target: Path) -> Path:
    subprocess.run(["git", "clone", "--quiet", url, str(target)], check=True)
    return target


def test_a_moved_branch_is_rebased_onto(tmp_path: Path) -> None:
    project = make_project(tmp_path, "moved", units=1)
    unit = _clone(project.url, tmp_path / "unit")
    person = _clone(project.url, tmp_path / "person")
    (person / "NOTES.md").write_text("a person's note\n", encoding="utf-8")
    _git(person, "add", "NOTES.md")
    _git(person, "commit", "-q", "-m", "a person's change")
    _git(person, "push", "-q", "origin", "main")

    (unit / "RESULT.md").write_text("the unit's work\n", encoding="utf-8")
    pushed = commit_and_push(unit, "main", "unit 1")
    assert pushed is not None
    log = _git(tmp_path / "person", "ls-remote", "origin", "main")
    assert log.startswith(pushed)
    check = _clone(project.url, tmp_path / "check")
    assert (check / "NOTES.md").is_file() and (check / "RESULT.md").is_file()


def test_a_conflicting_change_is_never_overwritten(tmp_path: Path) -> None:
    project = make_project(tmp_path, "conflict", units=1)
    unit = _clone(project.url, tmp_path / "unit")
    person = _clone(project.url, tmp_path / "person")
    (person / "tether.toml").write_text("# the person's version\n", encoding="utf-8")
    _git(person, "commit", "-qam", "a person's change")
    _git(person, "push", "-q", "origin", "main")
    theirs = _git(person, "rev-parse", "HEAD")

    (unit / "tether.toml").write_text("# the unit's version\n", encoding="utf-8")
    with pytest.raises(PushConflictError, match="does not rebase"):
        commit_and_push(unit, "main", "unit 1")
    assert _git(person, "ls-remote", "origin", "main").startswith(theirs)


def test_nothing_changed_pushes_nothing(tmp_path: Path) -> None:
    project = make_project(tmp_path, "quiet", units=1)
    unit = _clone(project.url, tmp_path / "unit")
    assert commit_and_push(unit, "main", "unit 1") is None
