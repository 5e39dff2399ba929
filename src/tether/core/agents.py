"""What counts as an agent process: one list, one matcher, one override variable.

The gate (session-id fallback, ``tether session new``), the watchdog (who runs)
and the room (who opened it) all ask :func:`match_agent`. Standard library
only: the gate imports it on every tool call.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

# Executable basenames, interpreter script basenames and ``-m`` modules of agent CLIs.
AGENT_NAMES = frozenset(
    {
        "claude",
        "codex",
        "copilot",
        "pi",
        "vibe",
        "tether-scripted-agent",
        "tether.harnesses.scripted",
        "tether.testing.scripted_agent",
    }
)
# npm package paths that identify an agent CLI run by node under another name.
AGENT_PATH_MARKERS = {
    "@anthropic-ai/claude-code": "claude",
    "@openai/codex": "codex",
    "@github/copilot": "copilot",
    "pi-coding-agent": "pi",
    "mistral-vibe": "vibe",
}
# Extra agent executables, for agents tether does not know by name: a comma-separated
# list of basenames ("aider,goose"). Read by every process that asks who is an agent.
AGENTS_ENV = "TETHER_GATE_AGENTS"
INTERPRETERS = ("node", "nodejs", "bun", "deno", "python", "pypy")
_SUFFIXES = (".exe", ".js", ".mjs", ".cjs", ".py")


def agent_names(environ: Mapping[str, str] | None = None) -> frozenset[str]:
    """The known agent names plus those named in ``TETHER_GATE_AGENTS``."""
    extra = (os.environ if environ is None else environ).get(AGENTS_ENV, "")
    if not extra:
        return AGENT_NAMES
    return AGENT_NAMES | {name.strip() for name in extra.split(",") if name.strip()}


def basename(path: str) -> str:
    """A program's name: its path's last part without ``.exe``/``.js``/``.py`` …"""
    name = path.rsplit("/", 1)[-1]
    for suffix in _SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def is_interpreter(name: str) -> bool:
    return any(name == base or name.startswith(base) for base in INTERPRETERS)


def script_of(argv: tuple[str, ...]) -> tuple[str | None, str | None]:
    """(script path, module) an interpreter runs, skipping its own options."""
    index = 1
    while index < len(argv):
        arg = argv[index]
        if arg == "-m" and index + 1 < len(argv):
            return None, argv[index + 1]
        if arg.startswith("-m") and len(arg) > 2:
            return None, arg[2:]
        if arg in ("-c", "-e", "--eval", "-p", "--print"):
            return None, None
        if arg.startswith("-"):
            index += 1
            continue
        return arg, None
    return None, None


def match_agent(
    name: str, argv: tuple[str, ...], names: frozenset[str] | None = None
) -> str | None:
    """The agent a process is (``name``: its process name; ``argv``: its command line).

    A name matches the executable's basename, the process name, an
    interpreter's script basename or its ``-m`` module; the npm package paths
    of known agent CLIs match the agent they belong to. ``names`` defaults to
    :func:`agent_names`.
    """
    known = agent_names() if names is None else names
    exe = basename(argv[0]) if argv else name
    if exe in known:
        return exe
    if not is_interpreter(exe) and basename(name) in known:
        return basename(name)
    if is_interpreter(exe) or is_interpreter(name):
        script, module = script_of(argv)
        if module is not None and module in known:
            return module
        if script is not None:
            base = basename(script)
            if base in known:
                return base
            for marker, agent in AGENT_PATH_MARKERS.items():
                if marker in script and agent in known:
                    return agent
    return None
