"""What changed in the work tree during a run, without touching it.

tether never resets, stashes or commits: it only looks. In a git repository it
compares ``git status`` (and content hashes of paths already dirty at the start);
elsewhere a bounded snapshot of file sizes and modification times.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

SKIP_DIRS = frozenset({".git", ".tether", ".venv", "node_modules", "__pycache__", ".mypy_cache"})
MAX_FILES = 20_000


@dataclass(frozen=True)
class Snapshot:
    kind: str  # "git" or "files"
    entries: dict[str, str] = field(default_factory=dict)
    truncated: bool = False


def _git(cwd: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.decode("utf-8", "replace")


def _hash(path: Path) -> str:
    try:
        digest = hashlib.sha1(usedforsecurity=False)
        with path.open("rb") as f:
            for chunk in iter(lambda: f.read(1 << 16), b""):
                digest.update(chunk)
        return digest.hexdigest()
    except OSError:
        return "missing"


def is_git_repo(cwd: Path) -> bool:
    return (_git(cwd, "rev-parse", "--is-inside-work-tree") or "").strip() == "true"


def _excluded_prefix(cwd: Path, exclude: Path | None) -> str | None:
    """``exclude`` (tether's own home) as a relative path prefix, if it lies in the tree."""
    if exclude is None:
        return None
    try:
        rel = exclude.resolve().relative_to(cwd.resolve())
    except ValueError:
        return None
    return str(rel) + "/"


def snapshot(cwd: Path, exclude: Path | None = None) -> Snapshot:
    """The state of the work tree, leaving out ``exclude`` (tether's own files)."""
    snap = _snapshot(cwd)
    prefix = _excluded_prefix(cwd, exclude)
    if prefix is None:
        return snap
    kept = {p: v for p, v in snap.entries.items() if not (p + "/").startswith(prefix)}
    return Snapshot(snap.kind, kept, snap.truncated)


def _snapshot(cwd: Path) -> Snapshot:
    if is_git_repo(cwd):
        status = _git(cwd, "status", "--porcelain=v1", "-z", "--untracked-files=all") or ""
        entries: dict[str, str] = {}
        for item in status.split("\0"):
            if len(item) > 3:
                code, path = item[:2], item[3:]
                entries[path] = f"{code}:{_hash(cwd / path)}"
        return Snapshot("git", entries)
    files: dict[str, str] = {}
    truncated = False
    for dirpath, dirnames, filenames in os.walk(cwd):
        dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS]
        for name in filenames:
            file_path = Path(dirpath) / name
            try:
                st = file_path.lstat()
            except OSError:
                continue
            files[str(file_path.relative_to(cwd))] = f"{st.st_size}:{st.st_mtime_ns}"
            if len(files) >= MAX_FILES:
                truncated = True
                break
        if truncated:
            break
    return Snapshot("files", files, truncated)


def changes(before: Snapshot, after: Snapshot) -> list[dict[str, str]]:
    """Paths whose state differs between two snapshots, with a one-word change."""
    out: list[dict[str, str]] = []
    for path in sorted(set(before.entries) | set(after.entries)):
        old, new = before.entries.get(path), after.entries.get(path)
        if old == new:
            continue
        if after.kind == "git":
            if new is None:
                change = "reverted"
            else:
                code = new.split(":", 1)[0]
                change = {"??": "untracked", " D": "deleted", "D ": "deleted"}.get(
                    code, "modified" if "A" not in code else "added"
                )
        else:
            change = "added" if old is None else "deleted" if new is None else "modified"
        out.append({"path": path, "change": change})
    return out


def diff_stat(cwd: Path) -> str | None:
    if not is_git_repo(cwd):
        return None
    return (_git(cwd, "diff", "--stat", "HEAD") or _git(cwd, "diff", "--stat") or "").strip()
