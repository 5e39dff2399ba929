"""The level-2 sources of a project, built from its ``[loop.sources]`` tables.

Each role gets its table merged over the role's default (``effective_source``):
the built-in source (``tether.loop.builtin``), a folder (``files``) or commands
(``command``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from tether.config.loop import ROLES, LoopSettings, effective_source, parse_duration
from tether.core.errors import ConfigError
from tether.loop.builtin import builtin_source
from tether.loop.sources import CommandSource, FileSource, Source


def build_sources(
    settings: LoopSettings, project_root: Path, env: Mapping[str, str]
) -> list[Source]:
    """The four sources, in chain order, from the configuration (role defaults filled in)."""
    sources: list[Source] = []
    for role in ROLES:
        spec = effective_source(settings, role)
        key = f"loop.sources.{role}"
        if spec.kind == "builtin":
            if spec.path or spec.argvs() or spec.fingerprint_command:
                raise ConfigError(
                    f'`{key}` is kind = "builtin", which takes no `path` or `command`; '
                    f'name the kind ("files" or "command") to use your own',
                    key=f"{key}.kind",
                )
            sources.append(builtin_source(role, project_root, env))
        elif spec.kind == "files":
            if not spec.path:
                raise ConfigError(f'`{key}.path` is needed for kind = "files"', key=f"{key}.path")
            folder = Path(spec.path).expanduser()
            folder = folder if folder.is_absolute() else project_root / folder
            sources.append(FileSource(role, folder, spec.path))
        else:
            if spec.command and spec.commands:
                raise ConfigError(
                    f"`{key}` has both `command` and `commands`; keep one of them",
                    key=f"{key}.commands",
                )
            if not spec.argvs():
                raise ConfigError(
                    f'`{key}.command` (or `commands`) is needed for kind = "command"',
                    key=f"{key}.command",
                )
            timeout = parse_duration(spec.timeout or settings.source_timeout)
            sources.append(
                CommandSource(
                    role,
                    spec.argvs(),
                    cwd=project_root,
                    timeout=timeout,
                    env=env,
                    # the guard's view: its own fingerprint command, else its first
                    # command, asked on every tick that reaches level 2, so a source
                    # that starts failing (or is fixed) shows at once
                    fingerprint_command=spec.fingerprint_command or spec.argvs()[0],
                )
            )
    return sources
