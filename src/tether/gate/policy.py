"""The autonomy policy at the gate: refuse irreversible tool calls in loop-dispatched runs.

Only when ``TETHER_POLICY`` names a policy file (the loop writes one per
dispatched run, see ``tether.loop.policy``) is anything checked; otherwise the
cost is one environment lookup. The file says which command patterns are
refused, which branches are protected, the work tree, and whether the
ticket carries a human approval (then nothing is refused). A refusal is
appended to the file's refusal log, so the loop can send the ticket to
``USER/approval`` after the run.

Standard library only: this runs on every tool call.
"""

from __future__ import annotations

import os

ENV = "TETHER_POLICY"
_INPUT_KEYS = ("tool_input", "toolInput", "toolArgs", "input", "args", "arguments")


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


def check(payload: dict[str, object]) -> str | None:
    """The refusal message for this tool call, or None (no policy, or nothing matched)."""
    path = os.environ.get(ENV)
    if not path:
        return None
    command = command_of(payload)
    if command is None:
        return None
    import json

    try:
        with open(path, encoding="utf-8") as handle:
            policy = json.load(handle)
    except (OSError, ValueError):
        return None  # a broken policy file must not block every call
    if not isinstance(policy, dict) or policy.get("approved"):
        return None
    why = _matched(command, policy)
    if why is None:
        return None
    rule, what = why
    _record(policy, command, rule)
    ticket = policy.get("ticket")
    how = (
        f"a person approves with `tether board approve {ticket}` and the loop runs the unit again"
        if ticket
        else "the loop marks the item as waiting for a person's approval"
    )
    return (
        f"tether: call refused by the autonomy policy (rule `{rule}`): `{command[:200]}` "
        f"{what}. This step needs a human approval. Do not try it another way. Finish "
        f"the rest of the unit without it and end with a short progress report that says "
        f"this step waits for approval; {how}."
    )


def _matched(command: str, policy: dict[str, object]) -> tuple[str, str] | None:
    import re
    import shlex

    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    protected = policy.get("protected_branches") or []
    work_tree = str(policy.get("work_tree") or os.getcwd())
    for start, word in enumerate(words):
        name = os.path.basename(word)
        if name == "git" and "push" in words[start + 1 :]:
            branch = _pushed_to_protected(words[start + 1 :], protected, work_tree)
            if branch is not None:
                return "push-protected", f"pushes to the protected branch {branch}"
        if name == "rm":
            outside = _removes_outside(words[start + 1 :], work_tree)
            if outside is not None:
                return "rm-outside", f"deletes {outside}, outside the work tree {work_tree}"
    commands = policy.get("commands") or {}
    if isinstance(commands, dict):
        for rule, pattern in commands.items():
            if isinstance(pattern, str) and re.search(pattern, command, re.IGNORECASE):
                return str(rule), "is an externally visible or irreversible step"
    return None


def _pushed_to_protected(args: list[str], protected: object, work_tree: str) -> str | None:
    if not isinstance(protected, list) or not protected:
        return None
    after = args[args.index("push") + 1 :]
    positional = [a for a in after if not a.startswith("-")]
    for separator in ("&&", ";", "||", "|"):
        if separator in positional:
            positional = positional[: positional.index(separator)]
    refspecs = positional[1:]  # the first one is the remote
    if not refspecs:
        current = _current_branch(work_tree)
        return current if current in protected else None
    for spec in refspecs:
        target = spec.lstrip("+").rsplit(":", 1)[-1]
        target = target.removeprefix("refs/heads/")
        if target == "HEAD":
            target = _current_branch(work_tree) or target
        if target in protected:
            return target
    return None


def _current_branch(work_tree: str) -> str | None:
    folder = os.path.abspath(work_tree)
    while True:
        head = os.path.join(folder, ".git", "HEAD")
        if os.path.isfile(head):
            try:
                with open(head, encoding="utf-8") as handle:
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
    root = os.path.realpath(work_tree)
    for arg in args:
        if arg.startswith("-") or arg in ("&&", ";", "||", "|"):
            continue
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
