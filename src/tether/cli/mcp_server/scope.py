"""The project an MCP server serves, and the folders a tool's path argument may name.

A client of ``tether mcp`` is a model: whatever it writes into ``root`` or
``board`` is untrusted text. Such a path is resolved (symlinks followed)
relative to the project root, and kept only when it lands inside the project
or inside a folder ``[mcp] roots`` of the project's ``tether.toml`` names;
anything else is a usage error before any file is opened. A server started
outside any project (no ``tether.toml`` at or above its folder) serves no
project: the tools that work on one refuse, rather than reading, indexing or
creating anything in whatever folder the server happens to run in.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tether.config import Config, load_config
from tether.config.mcp import McpSettings
from tether.config.schema import WikiSettings
from tether.core.errors import ConfigError, PathEscapeError, UsageError
from tether.fs import resolve_inside


@dataclass(frozen=True)
class Served:
    """The project a server serves (None outside a project) and where paths may go."""

    project: Path | None
    roots: tuple[Path, ...]
    config: Config

    def require_project(self, tool: str) -> Path:
        if self.project is None:
            raise ConfigError(
                f"{tool}: refused: tether mcp serves no project (no tether.toml at or above "
                f"{Path.cwd()}); start the server in a project (`tether init` makes one)."
            )
        return self.project

    def inside(self, given: str, argument: str, tool: str) -> Path:
        """``given`` (relative to the project root) resolved, if it stays where it may."""
        project = self.require_project(tool)
        candidate = Path(given).expanduser()
        if not candidate.is_absolute():
            candidate = project / candidate
        for root in self.roots:
            try:
                found = resolve_inside(root, candidate)
            except PathEscapeError:
                continue
            if found.exists() and not found.is_dir():
                raise UsageError(f"{tool}: {argument} {given!r} is not a folder.")
            return found
        where = str(project)
        if len(self.roots) > 1:
            where += " or a folder [mcp] roots names (" + ", ".join(map(str, self.roots[1:])) + ")"
        raise UsageError(
            f"{tool}: refused: {argument} {given!r} is outside {where}; an MCP client may "
            f"name only folders inside the project (a person can add folders to [mcp] roots "
            f"in tether.toml)."
        )

    def wiki_root(self, given: str | None, tool: str) -> str:
        """The wiki folder a tool works on: ``given`` (checked), else the configured one,
        else the project root; never the server's working folder outside a project."""
        if given is not None:
            return str(self.inside(given, "root", tool))
        configured = self.config.section("wiki", WikiSettings).root
        if configured is not None:
            return str(self.config.project_root / Path(configured).expanduser())
        return str(self.require_project(tool))

    @property
    def settings(self) -> McpSettings:
        return self.config.section("mcp", McpSettings)


# the last answer, for the configuration object it came from (a kept configuration is
# the same object while its files are unchanged: tether.config.loader.keep_loaded)
_last: list[tuple[Config, Served]] = []


def served(config: Config | None = None) -> Served:
    """What the server in this process serves, by the configuration found from its folder."""
    config = load_config() if config is None else config
    last = _last[0] if _last else None
    if last is not None and last[0] is config:
        return last[1]
    found = _served(config)
    _last[:] = [(config, found)]
    return found


def _served(config: Config) -> Served:
    if config.project_file is None:
        return Served(None, (), config)
    project = config.project_root.resolve()
    extra = config.section("mcp", McpSettings).roots
    roots = [project]
    for name in extra:
        path = Path(name).expanduser()
        roots.append((path if path.is_absolute() else project / path).resolve())
    return Served(project, tuple(dict.fromkeys(roots)), config)
