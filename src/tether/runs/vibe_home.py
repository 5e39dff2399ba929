"""A per-run ``VIBE_HOME`` that adds the gate's ``pre_tool`` hook for one run.

Vibe reads hooks only from ``<project>/.vibe/hooks.toml`` (trusted folders) and
``$VIBE_HOME/hooks.toml``, and has no flag for a hooks file. So a run gets its
own home: a folder in the run's directory holding a symlink to every entry of
the user's ``VIBE_HOME`` (config, ``.env`` with the API key, agents, skills,
logs: sessions still land in the user's own log folder) except
``hooks.toml``, which is the user's hooks with tether's ``pre_tool`` entry
added. Nothing in the user's ``VIBE_HOME`` is changed, except that its
``logs`` folder is made when missing, so the session journal stays where
``VibeHarness.session_file`` looks for it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from tether.core.errors import ConfigError
from tether.fs import atomic_write_text
from tether.harnesses.vibe_prices import vibe_home as user_vibe_home

HOOKS_FILE = "hooks.toml"


def write_run_vibe_home(run_root: Path, env: Mapping[str, str], gate: list[str]) -> Path:
    """Lay the run's home over the user's; returns its ``hooks.toml``."""
    from tether.gate.hook_file import InstallError
    from tether.gate.hook_vibe import merge_vibe_hooks, vibe_block

    user_home = user_vibe_home(env)
    home = run_root / "vibe-home"
    home.mkdir(parents=True, exist_ok=True)
    try:
        (user_home / "logs").mkdir(parents=True, exist_ok=True)
        entries = sorted(user_home.iterdir())
    except OSError as exc:
        raise ConfigError(
            f"cannot read VIBE_HOME {user_home}: {exc}", path=str(user_home)
        ) from None
    for entry in entries:
        if entry.name == HOOKS_FILE:
            continue
        link = home / entry.name
        if not link.is_symlink() and not link.exists():
            link.symlink_to(entry)
    user_hooks = user_home / HOOKS_FILE
    try:
        before = user_hooks.read_text(encoding="utf-8") if user_hooks.is_file() else None
        merged = merge_vibe_hooks(str(user_hooks), before, vibe_block(gate, ("pre_tool",)))
    except (OSError, InstallError) as exc:
        raise ConfigError(f"cannot add the run's hook to Vibe's hooks: {exc}") from None
    hooks = home / HOOKS_FILE
    atomic_write_text(hooks, merged or "")
    return hooks
