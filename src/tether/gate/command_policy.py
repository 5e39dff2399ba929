"""The gate's command policy: a second belt where no sandbox is the wall.

Inside tether's sandbox (the agent's environment names the run's gate socket,
``TETHER_GATE_SOCKET``) nothing here is checked: the agent cannot reach a
remote, a registry or a cluster there, and proposes such steps instead
(``tether outbox``). Everywhere else — a person's own interactive session with
the gate installed, a run without the sandbox — a tool call's shell command is
checked against a few rules: ``git push`` to a protected branch (found in
``git worktree`` checkouts too, through aliases, ``sh -c`` and
``--mirror``/``--all``), ``rm -r`` and ``find -delete`` of a path outside the
work tree, and the command patterns (publish, release, deploy). No such list
is ever complete; it is a belt, not the wall.

The rules come from the file ``TETHER_POLICY`` names (the loop writes one per
dispatched run: the project's ``[policy]``, the work tree, the exact commands a
person approved for the ticket — one approval lets one refused step through, not
every later call of the run —, and where to log a refusal). Without one — or
when the file is missing or unreadable — the built-in rules apply, never
"allow everything"; ``TETHER_POLICY=off`` in the environment a person starts
the agent with switches the belt off.

Standard library only: this runs on every tool call.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

ENV = "TETHER_POLICY"
OFF = "off"
# set for the agent of a sandboxed run only (its gate answers over the run's socket)
SANDBOX_ENV = "TETHER_GATE_SOCKET"
DEFAULT_PROTECTED = ("main",)
# Matched against the whole command line (case-insensitive). ``\W{1,4}`` between
# words also finds them inside code: ``subprocess.run(['kubectl', 'apply', …])``.
DEFAULT_COMMANDS: dict[str, str] = {
    "publish": (
        r"\b(npm|pnpm|yarn)\W{1,4}publish\b|\btwine\W{1,4}upload\b|\bcargo\W{1,4}publish\b"
        r"|\bpoetry\W{1,4}publish\b|\bgem\W{1,4}push\b"
    ),
    "release": r"\bgh\W{1,4}release\W{1,4}create\b",
    "deploy": (
        r"(^|[;&|(\n]\s*|\b(run|make|fly|vercel|netlify|firebase|serverless|sls|kamal|cap)\s+)"
        r"[\w./-]*deploy\b|\bgh-deploy\b"
        r"|\bkubectl\W{1,4}(apply|rollout|delete|replace|patch)\b"
        r"|\bhelm\W{1,4}(install|upgrade)\b|\bterraform\W{1,4}(apply|destroy)\b"
        r"|\bvercel\b.*--prod\b"
    ),
}
_INPUT_KEYS = ("tool_input", "toolInput", "toolArgs", "input", "args", "arguments")
_SEPARATORS = frozenset({";", "&&", "||", "|", "&", "(", ")", "\n", "|&", ";;"})
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "fish"})
_WRAPPERS = frozenset(
    {"sudo", "env", "nohup", "time", "nice", "command", "exec", "setsid", "xargs"}
)
_MAX_DEPTH = 4  # sh -c 'sh -c "…"' nesting looked into


def command_of(payload: dict[str, object]) -> str | None:
    """The shell command a tool call runs, if it runs one."""
    for key in _INPUT_KEYS:
        value = payload.get(key)
        if isinstance(value, str):
            import json

            try:
                value = json.loads(value)
            except ValueError:
                continue
        if not isinstance(value, dict):
            continue
        for name in ("command", "cmd"):
            command = value.get(name)
            if isinstance(command, str) and command.strip():
                return command
            if isinstance(command, list) and command:
                return " ".join(str(part) for part in command)
    return None


def builtin_policy(work_tree: str) -> dict[str, object]:
    """The rules that apply when no readable policy file says otherwise."""
    return {
        "ticket": None,
        "allowed": [],
        "work_tree": work_tree,
        "protected_branches": list(DEFAULT_PROTECTED),
        "commands": dict(DEFAULT_COMMANDS),
    }


def load(path: str | None, work_tree: str) -> dict[str, object]:
    """The policy file's rules; the built-in ones when there is none or it cannot be read."""
    if path:
        import json

        try:
            with open(path, encoding="utf-8") as handle:
                policy = json.load(handle)
        except (OSError, ValueError):
            policy = None
        if isinstance(policy, dict):
            return policy
    return builtin_policy(work_tree)


def check(payload: dict[str, object], environ: Mapping[str, str] | None = None) -> str | None:
    """The refusal message for this tool call, or None (allowed, or the belt is off here).

    ``environ`` is the agent's environment (default: this process's)."""
    env = os.environ if environ is None else environ
    path = env.get(ENV)
    if path == OFF or env.get(SANDBOX_ENV):
        return None
    command = command_of(payload)
    if command is None:
        return None
    cwd = payload.get("cwd")
    policy = load(path, cwd if isinstance(cwd, str) and cwd else os.getcwd())
    allowed = policy.get("allowed")  # the exact commands a person approved for this ticket
    if isinstance(allowed, list) and command.strip() in allowed:
        return None
    why = _matched(command, policy)
    if why is None:
        return None
    rule, what = why
    _record(policy, command, rule)
    ticket = policy.get("ticket")
    how = (
        f"inside a run tether started, propose it (`tether outbox propose …`); a person "
        f"approves the proposal, or this exact command for the ticket's next run with "
        f"`tether board approve {ticket}`"
        if ticket
        else "inside a run tether started, propose it (`tether outbox propose …`) for a "
        "person to approve; in your own session, ask the person to run it themselves"
    )
    return (
        f"tether: call refused by the autonomy policy (rule `{rule}`): `{command[:200]}` "
        f"{what}. This step needs a human approval. Do not try it another way. Finish "
        f"the rest of the unit without it and end with a short progress report that says "
        f"this step waits for approval; {how}."
    )


def _matched(command: str, policy: dict[str, object], depth: int = 0) -> tuple[str, str] | None:
    import re

    work_tree = str(policy.get("work_tree") or os.getcwd())
    for words in _segments(command):
        found = _segment(words, policy, work_tree, depth)
        if found is not None:
            return found
    commands = policy.get("commands") or {}
    if isinstance(commands, dict):
        for rule, pattern in commands.items():
            if isinstance(pattern, str) and re.search(pattern, command, re.IGNORECASE):
                return str(rule), "is an externally visible or irreversible step"
    return None


def _segments(command: str) -> list[list[str]]:
    """The simple commands of a command line: words split the way a shell splits them."""
    import shlex

    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        tokens = list(lexer)
    except ValueError:
        tokens = command.split()
    segments: list[list[str]] = [[]]
    for token in tokens:
        if token in _SEPARATORS or set(token) <= set(";&|()"):
            segments.append([])
        else:
            segments[-1].append(token)
    return [s for s in segments if s]


def _segment(
    words: list[str], policy: dict[str, object], work_tree: str, depth: int
) -> tuple[str, str] | None:
    while words and ("=" in words[0] and not words[0].startswith("-")):
        words = words[1:]  # VAR=value before the program
    while words and os.path.basename(words[0]) in _WRAPPERS:
        words = words[1:]
        while words and (words[0].startswith("-") or "=" in words[0]):
            words = words[1:]
    if not words:
        return None
    program = os.path.basename(words[0])
    args = words[1:]
    if program in _SHELLS and depth < _MAX_DEPTH:
        for index, arg in enumerate(args[:-1]):
            if arg.startswith("-") and "c" in arg.lstrip("-"):
                return _matched(args[index + 1], policy, depth + 1)
        return None
    if program == "git":
        return _git(args, policy, work_tree)
    if program == "rm":
        outside = _removes_outside(args, work_tree)
        if outside is not None:
            return "rm-outside", f"deletes {outside}, outside the work tree {work_tree}"
    if program == "find" and ("-delete" in args or _finds_rm(args)):
        outside = _outside(_find_roots(args), work_tree)
        if outside is not None:
            return "delete-outside", f"deletes under {outside}, outside the work tree {work_tree}"
    return None


def _git(args: list[str], policy: dict[str, object], work_tree: str) -> tuple[str, str] | None:
    """A ``git … push`` to a protected branch, through ``-C``, ``-c alias.x=push``."""
    aliases: dict[str, list[str]] = {}
    where = work_tree
    index = 0
    while index < len(args) and args[index].startswith("-"):
        option = args[index]
        value = args[index + 1] if index + 1 < len(args) else ""
        if option == "-c":
            key, _, setting = value.partition("=")
            if key.lower().startswith("alias."):
                aliases[key[6:].lower()] = setting.lstrip("!").split()
            index += 2
        elif option == "-C":
            where = os.path.join(where, value)
            index += 2
        elif option in ("--git-dir", "--work-tree", "--namespace", "--exec-path"):
            index += 2
        else:
            index += 1
    rest = args[index:]
    if rest and rest[0].lower() in aliases:
        rest = [*aliases[rest[0].lower()], *rest[1:]]
    if not rest or rest[0] != "push":
        return None
    branch = _pushed_to_protected(rest[1:], policy.get("protected_branches"), where)
    if branch is None:
        return None
    return "push-protected", f"pushes to the protected branch {branch}"


def _pushed_to_protected(after: list[str], protected: object, work_tree: str) -> str | None:
    import fnmatch

    if not isinstance(protected, list) or not protected:
        return None
    names = [str(p) for p in protected]
    flags = [a for a in after if a.startswith("-")]
    if any(f in ("--mirror", "--all", "--branches") for f in flags):
        return f"{names[0]} (every branch is pushed)"
    refspecs = [a for a in after if not a.startswith("-")][1:]  # the first one is the remote
    if not refspecs:
        current = _current_branch(work_tree)
        return current if current in names else None
    for spec in refspecs:
        target = spec.lstrip("+").rsplit(":", 1)[-1].removeprefix("refs/heads/")
        if target == "HEAD":
            target = _current_branch(work_tree) or target
        for name in names:
            if target == name or ("*" in target and fnmatch.fnmatchcase(name, target)):
                return name
    return None


def _git_dir(folder: str) -> str | None:
    """The git directory of the checkout at ``folder``: ``.git``, or where a worktree's
    ``.git`` file points (``gitdir: …``)."""
    dot_git = os.path.join(folder, ".git")
    if os.path.isdir(dot_git):
        return dot_git
    if os.path.isfile(dot_git):
        try:
            with open(dot_git, encoding="utf-8") as handle:
                line = handle.readline().strip()
        except OSError:
            return None
        if line.startswith("gitdir:"):
            return os.path.normpath(os.path.join(folder, line[7:].strip()))
    return None


def _current_branch(work_tree: str) -> str | None:
    folder = os.path.abspath(work_tree)
    while True:
        git_dir = _git_dir(folder)
        if git_dir is not None:
            try:
                with open(os.path.join(git_dir, "HEAD"), encoding="utf-8") as handle:
                    text = handle.read().strip()
            except OSError:
                return None
            return text.removeprefix("ref: refs/heads/") if text.startswith("ref: ") else None
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def _removes_outside(args: list[str], work_tree: str) -> str | None:
    flags = "".join(a[1:] for a in args if a.startswith("-") and not a.startswith("--"))
    long = {a for a in args if a.startswith("--")}
    recursive = "r" in flags or "R" in flags or "--recursive" in long
    if not recursive:
        return None
    return _outside([a for a in args if not a.startswith("-")], work_tree)


def _finds_rm(args: list[str]) -> bool:
    for index, arg in enumerate(args[:-1]):
        if arg in ("-exec", "-execdir", "-ok") and os.path.basename(args[index + 1]) == "rm":
            return True
    return False


def _find_roots(args: list[str]) -> list[str]:
    roots: list[str] = []
    for arg in args:
        if arg.startswith("-") or arg in ("!", "("):
            break
        roots.append(arg)
    return roots or ["."]


def _outside(paths: list[str], work_tree: str) -> str | None:
    root = os.path.realpath(work_tree)
    for arg in paths:
        target = os.path.realpath(os.path.join(root, os.path.expanduser(arg)))
        if target != root and not target.startswith(root + os.sep):
            return target
    return None


def _record(policy: dict[str, object], command: str, rule: str) -> None:
    log = policy.get("refusals")
    if not isinstance(log, str):
        return
    import json
    import time

    line = json.dumps({"rule": rule, "command": command[:500], "at": time.time()})
    try:
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(line + "\n")
    except OSError:
        pass
