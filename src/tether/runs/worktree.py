"""What changed in the work tree during a run, without touching it.

tether never resets, stashes or commits: it only looks. In a git repository it
compares ``git status`` (and content hashes of paths already dirty at the start)
and the commits made during the run; elsewhere a bounded snapshot of file sizes
and modification times.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from dataclasses import dataclass, field, replace
from pathlib import Path

from tether.fs import atomic_write_json

SKIP_DIRS = frozenset({".git", ".tether", ".venv", "node_modules", "__pycache__", ".mypy_cache"})
MAX_FILES = 20_000


@dataclass(frozen=True)
class Snapshot:
    kind: str  # "git" or "files"
    entries: dict[str, str] = field(default_factory=dict)
    truncated: bool = False
    # git only: the repository's top folder (paths are relative to it) and its HEAD
    root: Path | None = None
    head: str | None = None
    # git only: paths changed by commits made since ``head`` of the earlier snapshot
    committed: dict[str, str] = field(default_factory=dict)


def save(snap: Snapshot, path: Path) -> None:
    """Keep the snapshot a run starts from beside the run, for a recovery to compare with."""
    atomic_write_json(
        path,
        {
            "kind": snap.kind,
            "entries": snap.entries,
            "truncated": snap.truncated,
            "root": str(snap.root) if snap.root is not None else None,
            "head": snap.head,
        },
        indent=None,
    )


def load(path: Path) -> Snapshot | None:
    """The snapshot ``save`` kept; None when there is none or it cannot be read."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        entries = {str(k): str(v) for k, v in data["entries"].items()}
        root = data.get("root")
        return Snapshot(
            str(data["kind"]),
            entries,
            bool(data.get("truncated")),
            Path(root) if root else None,
            data.get("head"),
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


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


def _git_root(cwd: Path) -> Path | None:
    top = (_git(cwd, "rev-parse", "--show-toplevel") or "").strip()
    return Path(top) if top else None


def _excluded_prefix(base: Path, exclude: Path | None) -> str | None:
    """``exclude`` (tether's own home) as a path prefix relative to ``base``, if inside."""
    if exclude is None:
        return None
    try:
        rel = exclude.resolve().relative_to(base.resolve())
    except ValueError:
        return None
    return str(rel) + "/"


def snapshot(cwd: Path, exclude: Path | None = None, since: Snapshot | None = None) -> Snapshot:
    """The state of the work tree, leaving out ``exclude`` (tether's own files).

    In a git repository paths are relative to its top folder, wherever in it the
    run started. Given the snapshot taken at the start (``since``), commits made
    in between are looked at too, so work the agent committed is not missed.
    """
    root = _git_root(cwd)
    snap = _git_snapshot(root, since) if root is not None else _files_snapshot(cwd)
    prefix = _excluded_prefix(root or cwd, exclude)
    if prefix is None:
        return snap

    def kept(entries: dict[str, str]) -> dict[str, str]:
        return {p: v for p, v in entries.items() if not (p + "/").startswith(prefix)}

    return replace(snap, entries=kept(snap.entries), committed=kept(snap.committed))


def _git_snapshot(root: Path, since: Snapshot | None) -> Snapshot:
    status = _git(root, "status", "--porcelain=v1", "-z", "--untracked-files=all") or ""
    entries: dict[str, str] = {}
    items = iter(status.split("\0"))
    for item in items:
        if len(item) > 3:
            code, path = item[:2], item[3:]
            entries[path] = f"{code}:{_hash(root / path)}"
            if code[0] in "RC":
                next(items, None)  # a rename's second field is the old path
    head = (_git(root, "rev-parse", "--verify", "-q", "HEAD") or "").strip() or None
    committed: dict[str, str] = {}
    if since is not None and since.head and head and head != since.head:
        names = _git(root, "diff", "--name-status", "-z", "--no-renames", since.head, head) or ""
        fields = names.split("\0")
        for code, path in zip(fields[::2], fields[1::2], strict=False):
            if path:
                committed[path] = code
    return Snapshot("git", entries, root=root, head=head, committed=committed)


def _files_snapshot(cwd: Path) -> Snapshot:
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
    listed = {entry["path"] for entry in out}
    for path, code in sorted(after.committed.items()):
        if path not in listed:
            out.append({"path": path, "change": "committed" if code != "D" else "deleted"})
    return out


def diff_stat(cwd: Path, since: Snapshot | None = None) -> str | None:
    """``git diff --stat`` of the work tree against the commit the run started from."""
    root = _git_root(cwd)
    if root is None:
        return None
    base = since.head if since is not None and since.head else "HEAD"
    return (_git(root, "diff", "--stat", base) or _git(root, "diff", "--stat") or "").strip()
