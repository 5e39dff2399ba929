"""A unit's outcome written back once, rebased when the branch moved, never forced over a person."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from tests.support.fleet_projects import FleetProject, make_project

from tether.fleet import git as fleet_git
from tether.fleet.git import (
    GitError,
    PushConflictError,
    UnitCommit,
    bundle,
    check_remote,
    clone_once,
    commit_all,
    commit_unit,
    has_clone,
    keep_for,
    prepare_clone,
    push_unit,
)

WID = "tether-fleet:p:abc:1:1"


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=p", "-c", "user.email=p@localhost", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


def _person_commits(url: str, folder: Path, name: str, text: str) -> str:
    subprocess.run(["git", "clone", "--quiet", url, str(folder)], check=True)
    (folder / name).write_text(text, encoding="utf-8")
    _git(folder, "add", name)
    _git(folder, "commit", "-q", "-m", "a person's change")
    _git(folder, "push", "-q", "origin", "main")
    return _git(folder, "rev-parse", "HEAD")


def _unit_commit(unit: Path, name: str, text: str) -> tuple[str, str]:
    base = _git(unit, "rev-parse", "HEAD")
    (unit / name).write_text(text, encoding="utf-8")
    commit = commit_all(unit, "unit 1", WID)
    assert commit is not None
    return base, commit


def _cloned(tmp_path: Path, name: str) -> tuple[FleetProject, Path, str]:
    """A project of one unit, and a unit's clone of it: (project, clone, its head)."""
    project = make_project(tmp_path, name, units=1)
    unit = tmp_path / "unit"
    return project, unit, prepare_clone(unit, project.url, "main")


def test_a_moved_branch_is_rebased_onto(tmp_path: Path) -> None:
    project, unit, _head = _cloned(tmp_path, "moved")
    _person_commits(project.url, tmp_path / "person", "NOTES.md", "a person's note\n")
    _base, commit = _unit_commit(unit, "RESULT.md", "the unit's work\n")
    pushed = push_unit(unit, "main", UnitCommit(WID, commit, None), timeout=60)
    assert _git(tmp_path / "person", "ls-remote", "origin", "main").startswith(pushed)
    check = tmp_path / "check"
    prepare_clone(check, project.url, "main")
    assert (check / "NOTES.md").is_file() and (check / "RESULT.md").is_file()


def test_a_unit_is_pushed_once_and_from_another_clone_by_its_bundle(tmp_path: Path) -> None:
    project, unit, _head = _cloned(tmp_path, "once")
    base, commit = _unit_commit(unit, "RESULT.md", "the unit's work\n")
    packed = bundle(unit, base)
    # the worker died after its commit: another one, with its own clone, pushes it
    other = tmp_path / "other"
    prepare_clone(other, project.url, "main")
    first = push_unit(other, "main", UnitCommit(WID, commit, packed), timeout=60)
    # and the step runs again (its answer was lost): nothing is pushed twice
    again = push_unit(unit, "main", UnitCommit(WID, commit, None), timeout=60)
    assert again == first
    log = _git(project.bare, "log", "--format=%s", "main")
    assert log.splitlines().count("unit 1") == 1
    # the clone is brought up to date, not made anew, and says which head it is at
    assert prepare_clone(other, project.url, "main") == first == _git(other, "rev-parse", "HEAD")
    assert (other / "RESULT.md").read_text(encoding="utf-8") == "the unit's work\n"


def test_a_conflicting_change_is_never_overwritten(tmp_path: Path) -> None:
    project, unit, _head = _cloned(tmp_path, "conflict")
    theirs = _person_commits(project.url, tmp_path / "person", "tether.toml", "# theirs\n")
    _base, commit = _unit_commit(unit, "tether.toml", "# the unit's version\n")
    with pytest.raises(PushConflictError, match="does not rebase"):
        push_unit(unit, "main", UnitCommit(WID, commit, None), timeout=60)
    assert _git(tmp_path / "person", "ls-remote", "origin", "main").startswith(theirs)


def test_nothing_changed_commits_nothing(tmp_path: Path) -> None:
    _project, unit, _head = _cloned(tmp_path, "quiet")
    assert commit_all(unit, "unit 1", WID) is None


def test_a_bad_repository_or_branch_is_refused(tmp_path: Path) -> None:
    project = make_project(tmp_path, "checked", units=1)
    check_remote(project.url, "main")
    with pytest.raises(GitError, match="no branch 'elsewhere'"):
        check_remote(project.url, "elsewhere")
    with pytest.raises(GitError, match="cannot read repository"):
        check_remote(f"file://{tmp_path}/missing.git", "main")


_real_git = fleet_git.git


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    ran: list[str] = []
    real = fleet_git.git

    def counted(cwd: Path, *args: str, timeout: float = fleet_git.GIT_TIMEOUT) -> str:
        ran.append(next(a for a in args if not a.startswith("-") and "=" not in a))
        return real(cwd, *args, timeout=timeout)

    monkeypatch.setattr(fleet_git, "git", counted)
    return ran


def test_a_units_commit_is_named_by_its_own_bundle(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project, unit, base = _cloned(tmp_path, "named")
    assert commit_unit(unit, "unit 1", WID, base, agent_ran=False) is None  # nothing changed
    (unit / "RESULT.md").write_text("the unit's work\n", encoding="utf-8")
    ran = _counting(monkeypatch)
    made = commit_unit(unit, "unit 1", WID, base, agent_ran=True)
    monkeypatch.setattr(fleet_git, "git", _real_git)
    assert ran == ["add", "commit", "bundle"]  # no rev-parse: the bundle names the commit
    assert made is not None
    commit, packed = made
    assert commit == _git(unit, "rev-parse", "HEAD")
    # another clone pushes it from that bundle alone
    other = tmp_path / "other"
    prepare_clone(other, project.url, "main")
    assert push_unit(other, "main", UnitCommit(WID, commit, packed), timeout=60) == commit


def _remote_history(bare: Path, count: int) -> list[str]:
    """The remote branch's last ``count`` commits, newest first."""
    return [_git(bare, "rev-parse", f"main~{k}") for k in range(count)]


def test_a_first_push_rejected_because_a_person_pushed_is_rebased(tmp_path: Path) -> None:
    project, unit, _head = _cloned(tmp_path, "first")
    theirs = _person_commits(project.url, tmp_path / "person", "NOTES.md", "a person's note\n")
    _base, commit = _unit_commit(unit, "RESULT.md", "the unit's work\n")
    # this process made the commit and never pushed it: the push goes without a look first
    pushed = push_unit(unit, "main", UnitCommit(WID, commit, None), timeout=60, first_try=True)
    assert pushed != commit  # rebased onto the person's change, which stays
    assert _remote_history(project.bare, 2) == [pushed, theirs]


def test_a_clone_kept_for_the_next_unit_skips_the_fetch_and_meets_a_persons_push_on_its_push(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project, unit, _head = _cloned(tmp_path, "kept")
    _base, commit = _unit_commit(unit, "RESULT.md", "the unit's work\n")
    pushed = push_unit(unit, "main", UnitCommit(WID, commit, None), timeout=60, first_try=True)
    keep_for(unit, "tether-fleet:p:abc:1:2", pushed)
    (unit / "LEFTOVER.txt").write_text("ignored or not, the clean takes it\n", encoding="utf-8")
    # a person pushes between the two units
    theirs = _person_commits(project.url, tmp_path / "person", "NOTES.md", "a person's note\n")
    ran = _counting(monkeypatch)
    head = prepare_clone(unit, project.url, "main", kept_for="tether-fleet:p:abc:1:2")
    assert head == pushed and ran == ["clean"]  # no fetch, no checkout
    assert not (unit / "LEFTOVER.txt").exists() and not (unit / "NOTES.md").exists()
    monkeypatch.setattr(fleet_git, "git", _real_git)
    # the unit's work goes on top of the person's change: its push is rejected, then rebased
    (unit / "MORE.md").write_text("the next unit's work\n", encoding="utf-8")
    second = commit_all(unit, "unit 2", "tether-fleet:p:abc:1:2")
    assert second is not None
    done = push_unit(
        unit, "main", UnitCommit("tether-fleet:p:abc:1:2", second, None), 60, first_try=True
    )
    assert _remote_history(project.bare, 3) == [done, theirs, pushed]


def test_a_kept_clone_is_for_its_successor_only_and_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project, unit, head = _cloned(tmp_path, "once-kept")
    ran = _counting(monkeypatch)
    keep_for(unit, "tether-fleet:p:abc:1:2", head)
    assert prepare_clone(unit, project.url, "main", kept_for="tether-fleet:p:abc:1:3") == head
    assert "fetch" in ran  # another unit: it fetches, and the note is gone
    ran.clear()
    assert prepare_clone(unit, project.url, "main", kept_for="tether-fleet:p:abc:1:2") == head
    assert "fetch" in ran
    ran.clear()
    keep_for(unit, "tether-fleet:p:abc:1:2", "0" * 40)  # the clone is not at the kept head
    assert prepare_clone(unit, project.url, "main", kept_for="tether-fleet:p:abc:1:2") == head
    assert "fetch" in ran
    ran.clear()
    keep_for(unit, "tether-fleet:p:abc:1:2", head)
    assert prepare_clone(unit, project.url, "main", kept_for="tether-fleet:p:abc:1:2") == head
    assert ran == ["clean"]
    ran.clear()
    assert prepare_clone(unit, project.url, "main", kept_for="tether-fleet:p:abc:1:2") == head
    assert "fetch" in ran  # used up


def test_a_clone_made_while_in_hand_is_made_once_and_fetched_in_the_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = make_project(tmp_path, "ahead", units=1)
    unit = tmp_path / "unit"
    assert not has_clone(unit, project.url)
    assert clone_once(unit, project.url, "main")
    assert has_clone(unit, project.url) and not has_clone(unit, "file:///elsewhere.git")
    ran = _counting(monkeypatch)
    assert not clone_once(unit, project.url, "main") and not ran  # there already: left as it was
    theirs = _person_commits(project.url, tmp_path / "person", "NOTES.md", "a person's note\n")
    assert prepare_clone(unit, project.url, "main") == theirs
    assert "clone" not in ran and "fetch" in ran
