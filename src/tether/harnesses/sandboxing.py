"""What each agent CLI needs inside tether's sandbox (the one home of that knowledge).

Per harness: the CLI's own state folder (writable: sessions, logs, caches),
the files in it that hold its configuration and hooks (kept read-only: a hook
planted there would run later, outside any sandbox), where its model lives
(base URLs from its settings and the person's configuration, and the vendor's
own hosts), and the flags and variables that switch off the CLI's own sandbox,
which cannot nest inside tether's:

============ ==================================================================
claude-code  ``CLAUDE_CONFIG_DIR`` (else ``~/.claude``); needs a writable
             ``TMPDIR`` (the sandbox's own ``/tmp``); its sandbox is off unless
             configured, and the run's settings say ``sandbox.enabled = false``
codex        ``CODEX_HOME`` (else ``~/.codex``); ``-c sandbox_mode=
             "danger-full-access"`` (its Landlock/seccomp sandbox cannot start
             inside another namespace)
copilot      ``COPILOT_HOME`` (else ``~/.copilot``); ``--allow-all-paths`` (its
             own path check would refuse what the sandbox already decides) and
             ``XDG_CACHE_HOME`` inside a writable folder
pi           ``PI_CODING_AGENT_DIR`` (else ``~/.pi/agent``); no sandbox of its own
vibe         ``VIBE_HOME`` (else ``~/.vibe``) and ``--output-dir``; no sandbox of its own
scripted     the folders of the CLI whose format it prints; no network
============ ==================================================================
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tether.harnesses.base import home_dir


@dataclass(frozen=True)
class SandboxNeeds:
    """One CLI's needs inside the sandbox (paths may not exist yet)."""

    state_dirs: tuple[Path, ...] = ()
    # files the CLI reads that may lie where the sandbox shows nothing (under /tmp)
    readable: tuple[Path, ...] = ()
    # inside state_dirs: configuration and hooks, read-only
    protected: tuple[Path, ...] = ()
    # base URLs and host names (host, host:port, *.domain) the model lives at
    urls: tuple[str, ...] = ()
    hosts: tuple[str, ...] = ()
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)


def _dir(env: Mapping[str, str], variable: str, *default: str) -> Path:
    explicit = env.get(variable)
    return Path(explicit).expanduser() if explicit else home_dir(env).joinpath(*default)


def _toml(path: Path) -> dict[str, object]:
    try:
        with path.open("rb") as f:
            return tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError):
        return {}


def _json(path: Path) -> dict[str, object]:
    try:
        loaded = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return loaded if isinstance(loaded, dict) else {}


def _values(tables: object, key: str) -> list[str]:
    """``key`` of every table in ``tables`` (a dict of tables or a list of them)."""
    if isinstance(tables, dict):
        items = list(tables.values())
    elif isinstance(tables, list):
        items = tables
    else:
        return []
    return [str(t[key]) for t in items if isinstance(t, dict) and isinstance(t.get(key), str)]


def _env_urls(env: Mapping[str, str], names: Sequence[str]) -> list[str]:
    return [env[name] for name in names if env.get(name)]


def _claude_code(env: Mapping[str, str], args: Sequence[str]) -> SandboxNeeds:
    folder = _dir(env, "CLAUDE_CONFIG_DIR", ".claude")
    return SandboxNeeds(
        state_dirs=(folder,),
        protected=(folder / "settings.json", folder / "settings.local.json"),
        urls=tuple(_env_urls(env, ("ANTHROPIC_BASE_URL",))),
        hosts=() if env.get("ANTHROPIC_BASE_URL") else ("api.anthropic.com:443",),
    )


def _codex(env: Mapping[str, str], args: Sequence[str]) -> SandboxNeeds:
    folder = _dir(env, "CODEX_HOME", ".codex")
    config = _toml(folder / "config.toml")
    urls = _values(config.get("model_providers", {}), "base_url")
    urls += _env_urls(env, ("OPENAI_BASE_URL",))
    if isinstance(config.get("openai_base_url"), str):
        urls.append(str(config["openai_base_url"]))
    provider = config.get("model_provider")
    builtin = provider in (None, "openai")
    return SandboxNeeds(
        state_dirs=(folder,),
        protected=(folder / "config.toml", folder / "hooks.json", folder / "rules"),
        urls=tuple(urls),
        hosts=("api.openai.com:443", "chatgpt.com:443", "auth.openai.com:443") if builtin else (),
        args=("-c", 'sandbox_mode="danger-full-access"'),
    )


def _copilot(env: Mapping[str, str], args: Sequence[str]) -> SandboxNeeds:
    folder = _dir(env, "COPILOT_HOME", ".copilot")
    own = env.get("COPILOT_PROVIDER_BASE_URL")
    return SandboxNeeds(
        state_dirs=(folder,),
        protected=(folder / "mcp-config.json", folder / "hooks"),
        urls=(own,) if own else (),
        hosts=() if own else ("*.githubcopilot.com:443", "api.github.com:443", "github.com:443"),
        args=("--allow-all-paths",),
    )


def _pi(env: Mapping[str, str], args: Sequence[str]) -> SandboxNeeds:
    folder = _dir(env, "PI_CODING_AGENT_DIR", ".pi", "agent")
    models = _json(folder / "models.json")
    urls = _values(models.get("providers", {}), "baseUrl")
    return SandboxNeeds(
        state_dirs=(folder,),
        protected=(folder / "settings.json", folder / "models.json", folder / "extensions"),
        urls=tuple(urls),
        hosts=()
        if urls
        else (
            "api.anthropic.com:443",
            "api.openai.com:443",
            "generativelanguage.googleapis.com:443",
            "openrouter.ai:443",
        ),
    )


def _vibe(env: Mapping[str, str], args: Sequence[str]) -> SandboxNeeds:
    folder = _dir(env, "VIBE_HOME", ".vibe")
    config = _toml(folder / "config.toml")
    urls = _values(config.get("providers", []), "api_base")
    # --output-dir DIR: where the person asked Vibe to write its export
    exports = tuple(_flag_paths(args, ("--output-dir",)))
    return SandboxNeeds(
        state_dirs=(folder, *exports),
        protected=(folder / "config.toml", folder / "hooks.toml", folder / ".env"),
        urls=tuple(urls),
        hosts=() if urls else ("api.mistral.ai:443",),
    )


# The scripted agent's flags naming files it writes, and files it reads.
_SCRIPTED_WRITES = ("--exec-log", "--prompt-log", "--child-pid-file")
_SCRIPTED_READS = ("--commands-file", "--replay", "--settings")


def _flag_paths(args: Sequence[str], flags: Sequence[str]) -> list[Path]:
    found = []
    for index, arg in enumerate(args):
        name, eq, value = arg.partition("=")
        if name in flags:
            value = value if eq else (args[index + 1] if index + 1 < len(args) else "")
            if value:
                found.append(Path(value).expanduser().absolute())
    return found


def _scripted(env: Mapping[str, str], args: Sequence[str]) -> SandboxNeeds:
    """The scripted agent writes where the CLI it mimics writes, and its own logs where
    its flags say; it has no model to reach."""
    fmt = args[args.index("--format") + 1] if "--format" in args[:-1] else "claude-code"
    mimicked = _NEEDS.get(fmt, _claude_code)(env, ())
    logs = tuple(path.parent for path in _flag_paths(args, _SCRIPTED_WRITES))
    return SandboxNeeds(
        state_dirs=(*mimicked.state_dirs, *logs),
        readable=tuple(_flag_paths(args, _SCRIPTED_READS)),
        protected=mimicked.protected,
    )


_NEEDS: dict[str, Callable[[Mapping[str, str], Sequence[str]], SandboxNeeds]] = {
    "claude-code": _claude_code,
    "codex": _codex,
    "copilot": _copilot,
    "pi": _pi,
    "vibe": _vibe,
}


def sandbox_needs(harness: str, env: Mapping[str, str], args: Sequence[str]) -> SandboxNeeds:
    """What ``harness`` needs inside the sandbox, read from its agent's ``env`` and ``args``."""
    if harness == "scripted":
        return _scripted(env, args)
    make = _NEEDS.get(harness)
    return make(env, args) if make is not None else SandboxNeeds()
