"""A run's sandbox: whether it has one, and what its agent may touch.

On by default (``[sandbox] mode = "on"``): a run whose sandbox cannot start is
refused with the fix, unless the person said ``--no-sandbox`` or ``mode =
"off"``. The agent's world (``tether.sandbox.spec``) is built here from the
project, the configuration and what the harness needs
(``tether.harnesses.sandboxing``):

- writable: the work folder, the CLI's own state folder, a run's extra folders
  (``RunRequest.writable``: a room's folder, a run's outbox);
- read-only inside them, and unrenameable: ``tether.toml``, the tether home,
  the board but its INBOX, the hook files of every harness, ``.git/hooks`` and
  ``.git/config``, the CLI's own configuration and hooks;
- empty: the usual secrets and ``[sandbox] hide``;
- reachable: the model's hosts and ``[sandbox] allow_hosts``.

A protected path that does not exist cannot be bound; one the agent creates
is moved into the run folder after the run (``quarantine``), so it never takes
effect.
"""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import shutil
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from tether.config import Config, Profile
from tether.config.loop import LoopSettings
from tether.config.schema import SandboxSettings as Settings
from tether.core.agent_tree import GATE_SOCKET
from tether.core.errors import ConfigError, TetherError
from tether.core.exit_codes import ExitCode
from tether.fs import atomic_write_json
from tether.harnesses.sandboxing import SandboxNeeds, sandbox_needs
from tether.runs.record import RunPaths
from tether.sandbox import launcher
from tether.sandbox.backend import backend_for_this_machine
from tether.sandbox.hosts import Host, HostError, host_of_url, parse_host
from tether.sandbox.network import Refusal as HostRefusal
from tether.sandbox.runtime import Sandbox, SandboxReport, Survivor

__all__ = ["SandboxReport"]
from tether.sandbox.spec import PRIVATE_ROOTS, SandboxSpec

SECRETS = (".ssh", ".aws", ".config/gh", ".git-credentials", ".netrc", ".docker", ".gnupg")
# per project: what runs later outside any sandbox, or configures tether itself
HOOK_FILES = (
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".mcp.json",
    ".codex",
    ".github/hooks",
    ".pi/extensions",
    ".pi/settings.json",
    ".vibe",
    ".git/hooks",
    ".git/config",
)
INBOX = "INBOX"


class NestedRunError(TetherError):
    """``tether run`` from inside a run."""

    exit_code = ExitCode.GATE_REFUSED


def refuse_nested(env: Mapping[str, str], what: str = "`tether run`") -> None:
    """A run never starts inside another: its budget would not count against the outer one.

    Inside a run: ``TETHER_RUN_ID`` is set, or (even with the variable removed)
    the run's sandbox shows its gate socket.
    """
    outer = env.get("TETHER_RUN_ID")
    if outer or GATE_SOCKET.exists():
        where = f"run {outer}" if outer else "a sandboxed run"
        raise NestedRunError(
            f"refused: {what} inside {where}; a run never starts another run (its "
            "budget would not count against this one): do the work in this run, or end it "
            "with a progress report that asks for a follow-up."
        )


def off_reason(config: Config, no_sandbox: bool) -> str | None:
    """Why this run has no sandbox (None: it must have one)."""
    if no_sandbox:
        return "--no-sandbox"
    settings = config.section("sandbox", Settings)
    if settings.mode == "off":
        source = config.sources.get("sandbox.mode", "default")
        return f'[sandbox] mode = "off" ({source})'
    return None


def runs_are_sandboxed(config: Config) -> bool:
    """Whether runs under ``config`` start sandboxed here (mode on, and a sandbox can start)."""
    return off_reason(config, False) is None and backend_for_this_machine().unavailable() is None


def require_backend() -> None:
    """Raise the one-line refusal (exit 3) when no sandbox can start here."""
    why = backend_for_this_machine().unavailable()
    if why is not None:
        raise ConfigError(f"cannot start the run's sandbox: {why}")


def _existing(paths: Iterable[Path]) -> list[Path]:
    found = []
    for path in paths:
        with contextlib.suppress(OSError):
            if path.exists() or path.is_symlink():
                found.append(path.resolve())
    return list(dict.fromkeys(found))


def _installed_programs(env: Mapping[str, str]) -> list[Path]:
    """Where tether and the agent's programs are installed: seen, read-only, inside.

    The private roots (``/tmp``, ``/run``...) start empty inside the sandbox, so
    an installation under one of them (a clone in ``/tmp`` with its virtual
    environment and its pinned CLIs) would vanish. Each ``PATH`` folder under a
    private root brings its parent along: ``node_modules/.bin`` links into
    ``node_modules``, a virtual environment's ``bin`` into its ``lib``.
    """
    path_dirs = [Path(p) for p in env.get("PATH", "").split(os.pathsep) if p]
    tether_source = Path(launcher.__file__).resolve().parents[2]  # holds the tether package
    found = [
        Path(sys.prefix),
        Path(sys.executable).resolve().parent,
        tether_source,
        *path_dirs,
    ]
    for folder in path_dirs:
        parent = folder.parent
        if any(parent != root and root in parent.parents for root in PRIVATE_ROOTS):
            found.append(parent)
    return found


def _homes(env: Mapping[str, str]) -> list[Path]:
    homes = [Path(env["HOME"])] if env.get("HOME") else []
    with contextlib.suppress(KeyError):
        homes.append(Path(pwd.getpwuid(os.getuid()).pw_dir))
    return homes


def _hidden(env: Mapping[str, str], settings: Settings) -> list[Path]:
    homes = _homes(env)
    paths = [home / secret for home in homes for secret in SECRETS]
    for entry in settings.hide:
        if entry.startswith("~"):
            paths += [home / entry[1:].lstrip("/") for home in homes[:1]]
        else:
            paths.append(Path(entry))
    return _existing(paths)


def hosts_for(needs: SandboxNeeds, settings: Settings) -> tuple[Host, ...]:
    hosts = [host for url in needs.urls if (host := host_of_url(url)) is not None]
    try:
        hosts += [parse_host(h) for h in (*needs.hosts, *settings.allow_hosts)]
    except HostError as exc:
        raise ConfigError(f"[sandbox] allow_hosts: {exc}", key="sandbox.allow_hosts") from None
    return tuple(dict.fromkeys(hosts))


@dataclass(frozen=True)
class Prepared:
    """A run's sandbox, ready to start its agent in."""

    sandbox: Sandbox
    args: tuple[str, ...]  # the harness's flags that switch its own sandbox off
    # protected paths that did not exist: created by the run, they are moved aside
    watched: tuple[Path, ...]


@dataclass(frozen=True)
class World:
    """What the plan needs to know of the run."""

    config: Config
    profile: Profile
    cwd: Path
    env: Mapping[str, str]  # the agent's environment
    paths: RunPaths
    writable: tuple[Path, ...] = ()
    readable: tuple[Path, ...] = ()


def _protected_candidates(world: World, needs: SandboxNeeds) -> list[Path]:
    config = world.config
    board = config.project_root / config.section("loop", LoopSettings).board
    candidates = [config.project_root / "tether.toml", config.home, board]
    if config.project_file is not None:
        candidates.append(config.project_file)
    for root in dict.fromkeys((world.cwd, config.project_root)):
        candidates += [root / name for name in HOOK_FILES]
    candidates += list(needs.protected)
    candidates.append(world.paths.root / "vibe-home" / "hooks.toml")
    return candidates


def prepare(world: World) -> Prepared:
    """The sandbox for one run (its proxy is listening once this returns)."""
    settings = world.config.section("sandbox", Settings)
    profile = world.profile
    needs = sandbox_needs(profile.harness, world.env, profile.args)
    for folder in needs.state_dirs:  # the CLI would make it: it must exist to be bound
        with contextlib.suppress(OSError):
            folder.mkdir(parents=True, exist_ok=True)
    run_vibe_home = world.paths.root / "vibe-home"
    writable = _existing([world.cwd, *needs.state_dirs, *world.writable, run_vibe_home])
    candidates = _protected_candidates(world, needs)
    protected = _existing(candidates)
    # a repository the agent makes (git init) is its own; the board and home are not files
    # that take effect by existing
    board = world.config.project_root / world.config.section("loop", LoopSettings).board
    skip = {world.config.home, board}
    watched = tuple(
        p
        for p in candidates
        if not (p.exists() or p.is_symlink())
        and p not in skip
        and not (".git" in p.parts and not (p.parent.exists()))
        and any(_under(p, w) for w in writable)
    )
    visible = _existing(
        [
            *_homes(world.env),
            world.config.home,
            world.config.project_root,
            *_installed_programs(world.env),
            world.paths.root,
            *needs.readable,
            *world.readable,
        ]
    )
    spec = SandboxSpec(
        cwd=world.cwd,
        writable=tuple(writable),
        protected=tuple(protected),
        reopened=tuple(_existing([board / INBOX])),
        visible=tuple(visible),
        hidden=tuple(_hidden(world.env, settings)),
        env=dict(needs.env),
    )
    sandbox = Sandbox(backend_for_this_machine(), spec, hosts_for(needs, settings))
    return Prepared(sandbox, needs.args, watched)


def _under(path: Path, folder: Path) -> bool:
    resolved = path.parent.resolve() / path.name if path.parent.exists() else path
    return resolved == folder or folder in resolved.parents


def quarantine(watched: Sequence[Path], paths: RunPaths) -> list[dict[str, str]]:
    """Move protected paths the run created into the run folder; what was moved."""
    moved = []
    for path in watched:
        if not (path.exists() or path.is_symlink()):
            continue
        target = paths.root / "quarantine" / str(path).lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            shutil.move(str(path), str(target))
        except OSError as exc:
            moved.append({"path": str(path), "moved_to": "", "error": str(exc)})
            continue
        moved.append({"path": str(path), "moved_to": str(target)})
    return moved


def turn_off_claude_sandbox(settings_file: Path | None) -> None:
    """The run's Claude Code settings say its own sandbox is off (it cannot nest)."""
    if settings_file is None or not settings_file.is_file():
        return
    try:
        data = json.loads(settings_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    if isinstance(data, dict):
        data["sandbox"] = {"enabled": False}
        atomic_write_json(settings_file, data)


OFF = "off"  # a run's findings mode when it had no sandbox


@dataclass(frozen=True)
class Findings:
    """What a run's sandbox saw, or why the run had none: ``sandbox.json`` holds its
    ``as_dict``, the run's report its lines."""

    mode: str  # "bubblewrap", or OFF with the reason
    reason: str | None = None
    refused_hosts: tuple[HostRefusal, ...] = ()
    survivors_killed: tuple[Survivor, ...] = ()  # still alive when the agent ended
    killed_at_stop: tuple[Survivor, ...] = ()
    quarantined: tuple[Mapping[str, str], ...] = ()  # protected paths moved aside

    @property
    def sandboxed(self) -> bool:
        return self.mode != OFF

    def as_dict(self) -> dict[str, object]:
        if not self.sandboxed:
            return {"mode": self.mode, "reason": self.reason}
        return {
            "mode": self.mode,
            "refused_hosts": [r.as_dict() for r in self.refused_hosts],
            "survivors_killed": [s.as_dict() for s in self.survivors_killed],
            "killed_at_stop": [s.as_dict() for s in self.killed_at_stop],
            "quarantined": [dict(q) for q in self.quarantined],
        }


def findings(report: SandboxReport, quarantined: Sequence[Mapping[str, str]]) -> Findings:
    """What the sandbox saw, as the run's record and report keep it."""
    return Findings(
        "bubblewrap",
        refused_hosts=tuple(report.refused),
        survivors_killed=report.survivors,
        killed_at_stop=report.killed_at_stop,
        quarantined=tuple(quarantined),
    )


def unsandboxed(reason: str) -> Findings:
    return Findings(OFF, reason)
