"""The few ``git`` questions a push proposal asks; read-only, so they work inside the sandbox."""

from __future__ import annotations

import subprocess
from pathlib import Path

GIT_TIMEOUT = 30.0


def git(cwd: Path, *args: str) -> str | None:
    """``git ARGS`` in ``cwd``: its stdout stripped, or None when it fails."""
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=cwd,
            capture_output=True,
            timeout=GIT_TIMEOUT,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.decode("utf-8", "replace").strip()


def top_folder(cwd: Path) -> Path | None:
    top = git(cwd, "rev-parse", "--show-toplevel")
    return Path(top) if top else None


def commit_of(root: Path, rev: str) -> str | None:
    """The commit ``rev`` names now (``--end-of-options``: a rev is never read as a flag)."""
    return git(root, "rev-parse", "--verify", "-q", "--end-of-options", f"{rev}^{{commit}}")


def current_branch(root: Path) -> str | None:
    return git(root, "symbolic-ref", "--short", "-q", "HEAD") or None


def is_branch(root: Path, name: str) -> bool:
    return git(root, "show-ref", "--verify", "-q", f"refs/heads/{name}") is not None


def remotes(root: Path) -> list[str]:
    return (git(root, "remote") or "").split()


def upstream_remote(root: Path, branch: str) -> str | None:
    return git(root, "config", "--get", f"branch.{branch}.remote") or None


def push_url(root: Path, remote: str) -> str | None:
    return git(root, "remote", "get-url", "--push", remote) or None


def valid_ref(root: Path, ref: str) -> bool:
    return git(root, "check-ref-format", ref) is not None


def new_commits(root: Path, commit: str, remote: str, limit: int) -> list[tuple[str, str]]:
    """(id, subject) of the commits ``commit`` brings that no ref of ``remote`` is known to
    have (as the remote-tracking refs say: nothing is fetched), newest first."""
    text = git(
        root,
        "log",
        f"--max-count={limit}",
        "--format=%H %s",
        commit,
        "--not",
        f"--remotes={remote}",
    )
    out: list[tuple[str, str]] = []
    for line in (text or "").splitlines():
        sha, _, subject = line.partition(" ")
        out.append((sha, subject))
    return out


def diff_stat(root: Path, commits: list[str]) -> str | None:
    """``git diff --stat`` from before the oldest of ``commits`` to the newest."""
    if not commits:
        return None
    oldest, newest = commits[-1], commits[0]
    base = git(root, "rev-parse", "--verify", "-q", f"{oldest}^")
    if base is None:  # the root commit: show what it holds
        return git(root, "show", "--stat", "--format=", newest)
    return git(root, "diff", "--stat", base, newest)
