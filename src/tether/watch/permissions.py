"""Which tool calls can sit on a permission dialog, per harness and the mode it runs in.

A tool call without a result for a while is only a confirmation wait when the
harness would ask the person before running that tool in the mode the agent
was started in; otherwise the tool simply runs long. The mode is read from the
agent's command line.

- Claude Code asks before ``Bash``, ``Write``, ``Edit``, ``MultiEdit``,
  ``NotebookEdit``, ``WebFetch``, ``WebSearch`` (file edits not with
  ``--permission-mode acceptEdits``); never with
  ``--dangerously-skip-permissions`` or ``--permission-mode bypassPermissions``.
- Codex asks before shell commands and patches; never with ``--full-auto``,
  ``--yolo``, ``--dangerously-bypass-approvals-and-sandbox`` or ``-a never``.
- Copilot CLI asks before shell commands, writes and fetches; never with
  ``--allow-all-tools``, ``--allow-all`` or ``--yolo``.
- Pi asks nothing: it has no permission dialogs.
- Vibe asks before shell commands and writes (``file_system.bash`` and the
  like, as 2.26.1 names them); never with ``--auto-approve`` (``--yolo``).

The scripted agent asks as the harness whose format it speaks (``--format``).
An agent tether does not know never counts as asking.
"""

from __future__ import annotations

from collections.abc import Sequence

CLAUDE_ASKS = frozenset(
    {"Bash", "Write", "Edit", "MultiEdit", "NotebookEdit", "WebFetch", "WebSearch"}
)
CLAUDE_EDITS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})
CODEX_ASKS = frozenset({"Bash", "shell", "exec_command", "local_shell", "apply_patch"})
COPILOT_ASKS = frozenset({"bash", "shell", "write", "edit", "create", "str_replace", "fetch"})
VIBE_ASKS = frozenset({"bash", "write_file", "search_replace"})
VIBE_NAMESPACE = "file_system."
SCRIPTED = ("tether.harnesses.scripted", "tether.testing.scripted_agent", "tether-scripted-agent")
_FORMAT_AGENT = {"claude-code": "claude", "codex": "codex", "copilot": "copilot", "pi": "pi"}


def _value(argv: Sequence[str], *names: str) -> str | None:
    for index, arg in enumerate(argv):
        for name in names:
            if arg == name and index + 1 < len(argv):
                return argv[index + 1]
            if arg.startswith(name + "="):
                return arg.split("=", 1)[1]
    return None


def harness_of(agent: str, argv: Sequence[str]) -> str:
    """The harness whose permission rules apply (the scripted agent: its ``--format``)."""
    if agent in SCRIPTED:
        return _FORMAT_AGENT.get(_value(argv, "--format") or "claude-code", "claude")
    return agent


def asks_permission(agent: str, argv: Sequence[str], tool: str | None) -> bool:
    """Would this agent, started with ``argv``, ask the person before running ``tool``?"""
    if tool is None:
        return False
    harness = harness_of(agent, argv)
    flags = set(argv)
    if harness == "claude":
        mode = _value(argv, "--permission-mode")
        if "--dangerously-skip-permissions" in flags or mode == "bypassPermissions":
            return False
        if mode == "acceptEdits" and tool in CLAUDE_EDITS:
            return False
        return tool in CLAUDE_ASKS
    if harness == "codex":
        never = {"--full-auto", "--yolo", "--dangerously-bypass-approvals-and-sandbox"}
        if flags & never or _value(argv, "-a", "--ask-for-approval") == "never":
            return False
        return tool in CODEX_ASKS
    if harness == "copilot":
        if flags & {"--allow-all-tools", "--yolo", "--allow-all"}:
            return False
        return tool in COPILOT_ASKS
    if harness == "vibe":
        # 2.26.1 names its own tools by runtime namespace (``file_system.bash``) in
        # its stream, journal and hook payloads; the model sees the bare name.
        bare = tool.removeprefix(VIBE_NAMESPACE)
        return not flags & {"--auto-approve", "--yolo"} and bare in VIBE_ASKS
    return False  # pi asks nothing; an unknown agent is not taken to
