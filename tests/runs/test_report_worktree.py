"""What a limit-stopped run's report says changed in the work tree.

Paths are the repository's own (relative to its top folder) wherever in it the
run starts; work the agent committed still shows; tether's own files never do.
Outside git, a file snapshot tells added, modified and deleted files apart.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

TETHER = str(Path(sys.executable).parent / "tether")
GIT_ID = ["-c", "user.email=t@example.invalid", "-c", "user.name=t"]


def _git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(root), *GIT_ID, *args], capture_output=True, text=True, check=True
    )
    return done.stdout


def _config(root: Path, commands: list[str], exec_log: Path) -> None:
    script = root.parent / "commands.txt"
    script.write_text("\n".join(commands) + "\n")
    args = json.dumps(
        ["--format", "claude-code", "--commands-file", str(script), "--exec-log", str(exec_log)]
    )
    (root / "tether.toml").write_text(
        "kill_grace_seconds = 0.5\n\n"
        f'[profiles.cheap]\nharness = "scripted"\nargs = {args}\ndefault = true\n'
    )


def _run(cwd: Path, env: dict[str, str], iterations: int) -> tuple[int, dict[str, Any]]:
    done = subprocess.run(
        [TETHER, "run", "--json", "--prompt", "change things", "--iterations", str(iterations)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.stdout, done.stderr
    return done.returncode, json.loads(done.stdout)


def test_a_run_from_a_subfolder_reports_repository_paths_and_commits(
    tmp_path: Path, tether_home: Path
) -> None:
    root = tmp_path / "repo"
    pkg = root / "pkg"
    pkg.mkdir(parents=True)
    (root / "README").write_text("readme\n")
    (pkg / "a.txt").write_text("one\n")
    (pkg / "b.txt").write_text("bee\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    _git(root, "add", "README", "pkg/a.txt", "pkg/b.txt")
    _git(root, "commit", "-q", "-m", "start")
    (pkg / "scratch.txt").write_text("untracked before the run\n")  # dirty at the start
    content = tmp_path / "content.txt"
    content.write_text("changed by the agent\n")
    exec_log = tmp_path / "exec.log"  # outside the tree: not part of the story
    _config(
        root,
        [
            f"cp {content} a.txt",
            f"cp {content} scratch.txt",
            "git add a.txt",
            "git -c user.email=a@example.invalid -c user.name=agent commit -q -m agent",
            f"cp {content} new.txt",
            f"cp {content} ../README",
        ],
        exec_log,
    )
    # tether's home inside the repository, as when it lives in the project's .tether
    env = {**os.environ, "TETHER_HOME": str(root / ".tether")}
    head = _git(root, "rev-parse", "HEAD").strip()
    code, record = _run(pkg, env, iterations=6)
    assert code == 20, record
    assert len(exec_log.read_text().splitlines()) == 6
    changed = {entry["path"]: entry["change"] for entry in record["report"]["files_changed"]}
    assert changed == {
        "pkg/a.txt": "committed",
        "pkg/scratch.txt": "untracked",
        "pkg/new.txt": "untracked",
        "README": "modified",
    }, changed  # tether.toml, untracked but unchanged, is not news
    assert not any(path.startswith(".tether") for path in changed)
    # the diff is against the commit the run started from, so it includes the commit
    stat = record["report"]["diff_stat"]
    assert "pkg/a.txt" in stat and "README" in stat
    # and tether itself committed nothing: only the agent's one commit is new
    assert _git(root, "rev-list", f"{head}..HEAD").strip().count("\n") == 0


def test_outside_git_a_file_snapshot_tells_what_changed(tmp_path: Path, tether_home: Path) -> None:
    root = tmp_path / "plain"
    root.mkdir()
    (root / "keep.txt").write_text("same\n")
    (root / "edit.txt").write_text("before\n")
    (root / "gone.txt").write_text("to be removed\n")
    content = tmp_path / "content.txt"
    content.write_text("a longer text than before\n")
    _config(
        root,
        [f"cp {content} edit.txt", f"cp {content} made.txt", "rm gone.txt"],
        tmp_path / "exec.log",
    )
    code, record = _run(root, {**os.environ}, iterations=3)
    assert code == 20, record
    report = record["report"]
    assert report["worktree"] == "files"
    assert report["diff_stat"] is None
    changed = {entry["path"]: entry["change"] for entry in report["files_changed"]}
    assert changed == {"edit.txt": "modified", "made.txt": "added", "gone.txt": "deleted"}
