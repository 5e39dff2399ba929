"""`tether skills install|uninstall`: each harness's folder, idempotent, never over a stranger."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import pytest
from tests.install_support import tether_in

from tether.skills import shipped_skills
from tether.skills.install import MARKER

NAMES = sorted(s.name for s in shipped_skills())


def skills(project: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return tether_in(project, home, "skills", *args)


def actions(out: str, action: str) -> int:
    return sum(1 for line in out.splitlines() if line.split()[1] == action)


def tree(root: Path) -> dict[str, bytes]:
    files = [p for p in sorted(root.rglob("*")) if p.is_file()]
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in files}


@pytest.mark.parametrize(
    ("harness", "folder"),
    [
        ("claude-code", ".claude/skills"),
        ("codex", ".agents/skills"),
        ("copilot", ".github/skills"),
        ("pi", ".pi/skills"),
        ("vibe", ".vibe/skills"),
    ],
)
def test_each_harness_gets_every_skill_in_its_project_folder(
    project: Path, home: Path, harness: str, folder: str
) -> None:
    done = skills(project, home, "install", "--harness", harness)
    assert done.returncode == 0, done.stderr
    for name in NAMES:
        installed = project / folder / name
        shipped = next(s for s in shipped_skills() if s.name == name)
        assert (installed / "SKILL.md").read_bytes() == shipped.files["SKILL.md"]
        marker = json.loads((installed / MARKER).read_text())
        assert marker["written_by"] == "tether skills install"
        assert f"create    {installed}" in done.stdout
    assert list(home.iterdir()) == []


@pytest.mark.slow
@pytest.mark.parametrize(
    ("harness", "folder"),
    [
        ("claude-code", ".claude/skills"),
        ("codex", ".codex/skills"),
        ("copilot", ".copilot/skills"),
        ("pi", ".pi/agent/skills"),
        ("vibe", ".vibe/skills"),
    ],
)
def test_user_scope_writes_below_home(project: Path, home: Path, harness: str, folder: str) -> None:
    done = skills(project, home, "install", "--harness", harness, "--scope", "user")
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in (home / folder).iterdir()) == NAMES
    assert list(project.iterdir()) == []


def test_all_writes_each_shared_folder_once(project: Path, home: Path) -> None:
    done = skills(project, home, "install", "--all")
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in (project / ".claude" / "skills").iterdir()) == NAMES
    assert sorted(p.name for p in (project / ".agents" / "skills").iterdir()) == NAMES
    assert sorted(p.name for p in project.iterdir()) == [".agents", ".claude"]
    for harness in ("copilot", "pi", "vibe"):
        for name in NAMES:
            covered = project / ".agents" / "skills" / name
            assert f"{harness:<12} covered   {covered} (loaded from there)" in done.stdout


def test_install_again_changes_nothing(project: Path, home: Path) -> None:
    assert skills(project, home, "install", "--all").returncode == 0
    before = tree(project)
    again = skills(project, home, "install", "--all")
    assert again.returncode == 0, again.stderr
    assert actions(again.stdout, "create") == actions(again.stdout, "update") == 0
    assert actions(again.stdout, "unchanged") == 2 * len(NAMES)
    assert tree(project) == before


def test_a_stale_copy_of_tethers_is_updated(project: Path, home: Path) -> None:
    assert skills(project, home, "install", "--harness", "pi").returncode == 0
    skill = project / ".pi" / "skills" / "room"
    marker = json.loads((skill / MARKER).read_text())
    old = b"---\nname: room\ndescription: an older version\n---\n"
    (skill / "SKILL.md").write_bytes(old)
    marker["files"]["SKILL.md"] = hashlib.sha256(old).hexdigest()
    (skill / MARKER).write_text(json.dumps(marker))
    done = skills(project, home, "install", "--harness", "pi")
    assert done.returncode == 0, done.stderr
    assert f"update    {skill}" in done.stdout
    assert (skill / "SKILL.md").read_bytes() != old


def test_a_folder_tether_did_not_write_is_refused_and_nothing_is_written(
    project: Path, home: Path
) -> None:
    mine = project / ".claude" / "skills" / "room"
    mine.mkdir(parents=True)
    (mine / "SKILL.md").write_text("---\nname: room\ndescription: my own\n---\n")
    done = skills(project, home, "install", "--harness", "claude-code")
    assert done.returncode == 41
    assert f"refuse    {mine} (no {MARKER}: tether did not write it)" in done.stdout
    assert done.stderr.startswith(f"tether: error: refused: {mine} is in the way")
    assert sorted(p.name for p in mine.parent.iterdir()) == ["room"]
    assert (mine / "SKILL.md").read_text().endswith("my own\n---\n")


def test_a_copy_changed_by_hand_is_neither_overwritten_nor_removed(
    project: Path, home: Path
) -> None:
    assert skills(project, home, "install", "--harness", "codex").returncode == 0
    edited = project / ".agents" / "skills" / "watch" / "SKILL.md"
    edited.write_text(edited.read_text() + "\nmy note\n")
    assert skills(project, home, "install", "--harness", "codex").returncode == 41
    done = skills(project, home, "uninstall", "--harness", "codex")
    assert done.returncode == 41
    assert "changed since tether wrote it" in done.stdout
    assert edited.read_text().endswith("my note\n")
    assert (project / ".agents" / "skills" / "room" / "SKILL.md").is_file()


def test_dry_run_shows_the_plan_and_writes_nothing(project: Path, home: Path) -> None:
    done = skills(project, home, "install", "--all", "--dry-run")
    assert done.returncode == 0, done.stderr
    assert actions(done.stdout, "create") == 2 * len(NAMES)
    assert "(dry run: nothing written)" in done.stderr
    assert list(project.iterdir()) == []


def test_uninstall_removes_only_tethers_own(project: Path, home: Path) -> None:
    assert skills(project, home, "install", "--all").returncode == 0
    other = project / ".claude" / "skills" / "deploy"
    other.mkdir()
    (other / "SKILL.md").write_text("---\nname: deploy\ndescription: not tether's\n---\n")
    done = skills(project, home, "uninstall", "--all")
    assert done.returncode == 0, done.stderr
    assert actions(done.stdout, "remove") == 2 * len(NAMES)
    assert [p.name for p in (project / ".claude" / "skills").iterdir()] == ["deploy"]
    assert list((project / ".agents" / "skills").iterdir()) == []
    again = skills(project, home, "uninstall", "--all")
    assert again.stdout == "no tether skill is installed there\n"


def test_harness_and_all_are_exclusive(project: Path, home: Path) -> None:
    done = skills(project, home, "install")
    assert done.returncode == 2
    assert "give exactly one of --harness NAME and --all" in done.stderr


def _copies(loads: list[Path]) -> dict[str, int]:
    """How many copies of each tether skill a harness loading ``loads`` finds."""
    found = dict.fromkeys(NAMES, 0)
    for folder in loads:
        for name in NAMES:
            if (folder / name / "SKILL.md").is_file():
                found[name] += 1
    return found


def test_one_copy_per_skill_per_harness_whatever_the_order(tmp_path: Path) -> None:
    from tether.skills import HARNESSES, apply_plan, plan_install, plan_uninstall, skills_dirs

    # Pi's and Vibe's own folders against the shared .agents/skills, in either order
    orders = [
        ("pi", "codex"),
        ("codex", "pi"),
        ("vibe", "pi", "claude-code"),
        ("pi", "vibe"),
        ("claude-code", "copilot", "pi"),
        ("copilot", "pi", "codex"),
    ]
    for number, order in enumerate(orders):
        project = tmp_path / f"p{number}"
        project.mkdir()
        env = {"HOME": str(tmp_path / "home")}
        for step in [*[[h] for h in order], list(HARNESSES), ["pi"]]:
            apply_plan(plan_install(step, "project", project, env))
            for harness in HARNESSES:
                loads = skills_dirs(harness, "project", project, env)
                counts = _copies(loads)
                if harness == "copilot":
                    # it loads Claude Code's and Codex's only folders both; it takes the first
                    assert set(counts.values()) <= {0, 1, 2}, (order, step, counts)
                elif harness in step:
                    assert set(counts.values()) == {1}, (order, step, harness, counts)
                else:
                    assert set(counts.values()) <= {0, 1}, (order, step, harness, counts)
        # taking one harness away leaves every other with its copy
        for leaving in HARNESSES:
            apply_plan(plan_uninstall([leaving], "project", project, env))
            for harness in HARNESSES:
                if harness != leaving and harness != "copilot":
                    counts = _copies(skills_dirs(harness, "project", project, env))
                    assert set(counts.values()) == {1}, (order, leaving, harness, counts)
            apply_plan(plan_install([leaving], "project", project, env))


def test_uninstall_for_one_harness_leaves_the_others_copies(project: Path, home: Path) -> None:
    assert skills(project, home, "install", "--all").returncode == 0
    before = tree(project)
    done = skills(project, home, "uninstall", "--harness", "copilot")
    assert done.returncode == 0, done.stderr
    assert actions(done.stdout, "remove") == 0
    after = tree(project)
    assert {p for p in after if p.endswith("SKILL.md")} == {
        p for p in before if p.endswith("SKILL.md")
    }
    for name in NAMES:
        marker = json.loads((project / ".agents" / "skills" / name / MARKER).read_text())
        assert marker["harnesses"] == ["codex", "pi", "vibe"]
    # the last harness a copy serves takes it away with it
    for harness in ("codex", "pi"):
        assert skills(project, home, "uninstall", "--harness", harness).returncode == 0
        assert (project / ".agents" / "skills" / "room" / "SKILL.md").is_file()
    last = skills(project, home, "uninstall", "--harness", "vibe")
    assert actions(last.stdout, "remove") == len(NAMES)
    assert list((project / ".agents" / "skills").iterdir()) == []
    assert sorted(p.name for p in (project / ".claude" / "skills").iterdir()) == NAMES
