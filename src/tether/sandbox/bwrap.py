"""The Linux backend: bubblewrap (``bwrap``), driven from Python.

The agent gets its own user, PID, network, IPC and UTS namespaces
(``--unshare-all``) and may not make further user namespaces
(``--disable-userns``, so it cannot unmount what protects it); the whole
sandbox dies with its supervisor (``--die-with-parent``) and has no terminal to
push keystrokes into (``--new-session``). The file system is the host's,
read-only, with the private roots (``/tmp``, ``/run``...) empty, and the
spec's folders bound over it, shallowest first: a deeper bind always lands on
top of the one above it.

A read-only bind inside a writable folder could be bypassed by renaming a
parent (``mv .board x; mkdir -p .board/...``). Every folder between the
writable one and a protected path is therefore bound onto itself: a mount point
cannot be renamed or removed.

``TETHER_BWRAP`` names the program when it is not ``bwrap`` on ``PATH``.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

from tether.sandbox.spec import PRIVATE_ROOTS, SandboxSpec

PROGRAM_ENV = "TETHER_BWRAP"
INSTALL_HINT = (
    "install bubblewrap (Debian/Ubuntu: apt install bubblewrap; Fedora: dnf install "
    'bubblewrap), or run unsandboxed with --no-sandbox or [sandbox] mode = "off"'
)
# order of operations at one depth: the folder itself, then what lies on it
_VISIBLE, _WRITABLE, _PARENT, _PROTECTED, _REOPENED, _HIDDEN = range(6)


def program() -> str | None:
    explicit = os.environ.get(PROGRAM_ENV)
    if explicit:
        return explicit if os.access(explicit, os.X_OK) else None
    # a system tool: found where the system installs it even on a narrowed PATH
    return shutil.which("bwrap") or next(
        (p for p in ("/usr/bin/bwrap", "/usr/local/bin/bwrap") if os.access(p, os.X_OK)), None
    )


@functools.lru_cache(maxsize=4)
def _probe(path: str) -> tuple[str | None, bool]:
    """(why bubblewrap cannot start, whether it knows --disable-userns)."""
    try:
        helped = subprocess.run(
            [path, "--help"], capture_output=True, text=True, timeout=10, check=False
        )
        disable_userns = "--disable-userns" in helped.stdout
        args = ["--unshare-all", "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev"]
        if disable_userns:
            args[1:1] = ["--unshare-user", "--disable-userns"]
        done = subprocess.run(
            [path, *args, sys.executable, "-I", "-S", "-c", ""],
            capture_output=True,
            text=True,
            timeout=20,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"bubblewrap ({path}) cannot run: {exc}; {INSTALL_HINT}", False
    if done.returncode != 0:
        said = (done.stderr.strip().splitlines() or ["no message"])[-1]
        return (
            f"bubblewrap cannot make a sandbox here ({said}); unprivileged user namespaces "
            "may be disabled (sysctl kernel.unprivileged_userns_clone=1, or on Ubuntu "
            "kernel.apparmor_restrict_unprivileged_userns=0), or run unsandboxed with "
            '--no-sandbox or [sandbox] mode = "off"'
        ), disable_userns
    return None, disable_userns


def _depth(path: Path) -> int:
    return len(path.parts)


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _ops(spec: SandboxSpec) -> list[tuple[int, int, Path]]:
    """(depth, kind, path) of every bind, in the order they must be made."""
    ops: list[tuple[int, int, Path]] = []
    private = [root for root in PRIVATE_ROOTS if root.is_dir() and not root.is_symlink()]
    for path in spec.visible:
        hidden_by_root = any(_inside(path, root) for root in private)
        if hidden_by_root and not any(_inside(path, w) for w in spec.writable):
            ops.append((_depth(path), _VISIBLE, path))
    ops.extend((_depth(p), _WRITABLE, p) for p in spec.writable)
    for path in spec.protected:
        around = [w for w in spec.writable if _inside(path, w) and w != path]
        if not around:
            continue  # read-only already
        root = max(around, key=_depth)
        parent = path.parent
        while parent != root and _inside(parent, root):
            ops.append((_depth(parent), _PARENT, parent))
            parent = parent.parent
        ops.append((_depth(path), _PROTECTED, path))
    ops.extend((_depth(p), _REOPENED, p) for p in spec.reopened)
    for path in spec.hidden:
        if any(_inside(path, root) for root in private) and not any(
            _inside(path, p) for p in (*spec.visible, *spec.writable)
        ):
            continue  # the private root hides it already
        ops.append((_depth(path), _HIDDEN, path))
    seen: set[tuple[int, Path]] = set()
    unique = []
    for op in sorted(ops, key=lambda o: (o[0], o[1], str(o[2]))):
        if (op[1], op[2]) not in seen:
            seen.add((op[1], op[2]))
            unique.append(op)
    return unique


def _args_for(kind: int, path: Path) -> list[str]:
    text = str(path)
    if kind in (_VISIBLE, _PROTECTED):
        return ["--ro-bind", text, text]
    if kind == _HIDDEN:
        if path.is_dir():
            return ["--tmpfs", text]
        return ["--ro-bind", "/dev/null", text]
    return ["--bind", text, text]


def mount_args(spec: SandboxSpec) -> list[str]:
    args = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    for root in PRIVATE_ROOTS:
        if root.is_dir() and not root.is_symlink() and not _inside(root, Path("/dev")):
            args += ["--tmpfs", str(root)]
    for _, kind, path in _ops(spec):
        args += _args_for(kind, path)
    for host, inside in spec.sockets:
        args += ["--ro-bind", str(host), str(inside)]
    return args


class Bubblewrap:
    name = "bubblewrap"

    def unavailable(self) -> str | None:
        path = program()
        if path is None:
            where = os.environ.get(PROGRAM_ENV) or "bwrap on PATH"
            return f"bubblewrap is not installed ({where} not found); {INSTALL_HINT}"
        return _probe(path)[0]

    def command(self, spec: SandboxSpec, launcher: Sequence[str], report_fd: int) -> list[str]:
        path = program()
        if path is None:
            raise RuntimeError(self.unavailable())
        namespaces: Iterable[str] = ["--unshare-all"]
        if _probe(path)[1]:
            namespaces = ["--unshare-all", "--unshare-user", "--disable-userns"]
        return [
            path,
            *namespaces,
            "--die-with-parent",
            "--new-session",
            *mount_args(spec),
            "--chdir",
            str(spec.cwd),
            "--",
            *launcher,
        ]
