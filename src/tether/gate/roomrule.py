"""Inside a room every read goes through the room's budget: the gate refuses the rest.

A room's run has ``TETHER_ROOM_DIR`` set. There the gate lets through only

- a shell call that is exactly ``tether wiki read ID`` (the read the room
  counts against B) or ``tether room conclude FILE`` / ``tether room conclude -``
  (with a here-document), nothing chained, piped, redirected or substituted;
- a write of the room's ``conclusion.md`` with the harness's write tool;
- a plan/todo update (it reads nothing).

Every other tool call (``cat`` of a page, a grep over the wiki, the harness's
own read tool, any other command) is refused with a message that names the
rule, and the refusal is logged in the room's ``reads.jsonl`` next to the
page reads. Standard library only: this runs inside the gate hook.
"""

from __future__ import annotations

import os

from tether.core.project import ENV_ROOM_DIR

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

ENV_ROOM_ID = "TETHER_ROOM_ID"
READS_FILE = "reads.jsonl"
CONCLUSION_FILE = "conclusion.md"
REFUSED_TOOL = "refused-tool"  # the outcome tether.room.state names too

# The tether commands a room's agent may run: ``tether wiki read ID`` and
# ``tether room conclude FILE|-``. The harnesses' own allow-lists (a second belt,
# ``tether.room.room.room_allowance``) are made from this one list.
ROOM_COMMANDS: tuple[tuple[str, str], ...] = (("wiki", "read"), ("room", "conclude"))
SHELL_TOOLS = frozenset(
    {"bash", "shell", "exec_command", "local_shell", "run_shell_command", "shell_command"}
)
WRITE_TOOLS = frozenset({"write", "create", "write_file"})
PLAN_TOOLS = frozenset({"todowrite", "todo_write", "update_plan", "todo"})
_SHELL_SPECIAL = frozenset(";|&<>()`$\n\r")
_ASKED_MAX = 200
NESTED_HINT = (
    "A room never opens a room (depth cap 1). Answer with the pages you have, and name what "
    "is missing as `missing: <what>`."
)


def _input(payload: dict[str, Any]) -> dict[str, Any]:
    for name in ("tool_input", "toolInput", "toolArgs", "input", "args"):
        value = payload.get(name)
        if isinstance(value, str):
            import json

            try:
                value = json.loads(value)
            except ValueError:
                return {"command": value}
        if isinstance(value, dict):
            return value
    return {}


def _command(tool_input: dict[str, Any]) -> str | None:
    value = tool_input.get("command", tool_input.get("cmd"))
    if isinstance(value, list) and all(isinstance(x, str) for x in value):
        if len(value) == 3 and value[0].rsplit("/", 1)[-1] in ("bash", "sh", "zsh"):
            return str(value[2]) if value[1] in ("-c", "-lc") else None
        import shlex

        return shlex.join(value)
    return value if isinstance(value, str) else None


def _is_tether(word: str) -> bool:
    return word.rsplit("/", 1)[-1] == "tether"


def _plain_words(command: str) -> list[str] | None:
    """The words of a simple command, or None when it chains, pipes, redirects or substitutes."""
    if any(ch in _SHELL_SPECIAL for ch in command):
        return None
    import shlex

    try:
        return shlex.split(command)
    except ValueError:
        return None


def _heredoc_conclude(command: str) -> bool:
    """``tether room conclude - <<'EOF'`` + text + ``EOF``, and nothing else."""
    first, _, rest = command.strip().partition("\n")
    head, sep, marker = first.partition("<<")
    if not sep:
        return False
    words = _plain_words(head)
    delimiter = marker.strip().lstrip("-").strip().strip("'\"")
    if not words or not delimiter or not delimiter.replace("_", "").isalnum():
        return False
    lines = rest.rstrip("\n").split("\n")
    if not lines or lines[-1].strip() != delimiter:
        return False
    return len(words) == 4 and _is_tether(words[0]) and words[1:] == ["room", "conclude", "-"]


def allowed_command(command: str) -> bool:
    words = _plain_words(command.strip())
    if words is None:
        return _heredoc_conclude(command)
    if len(words) != 4 or not _is_tether(words[0]):
        return False
    return tuple(words[1:3]) in ROOM_COMMANDS


def _allowed(tool: str, tool_input: dict[str, Any], room_dir: str) -> bool:
    name = tool.lower()
    if name in PLAN_TOOLS:
        return True
    command = _command(tool_input) if name in SHELL_TOOLS or "command" in tool_input else None
    if command is not None:
        return allowed_command(command)
    if name in WRITE_TOOLS:
        path = tool_input.get("file_path", tool_input.get("path"))
        if not isinstance(path, str):
            return False
        target = os.path.realpath(path)
        return target == os.path.join(os.path.realpath(room_dir), CONCLUSION_FILE)
    return False


def _asked(tool: str, tool_input: dict[str, Any]) -> str:
    command = _command(tool_input)
    what = command if command is not None else tool_input.get("file_path", tool_input.get("path"))
    text = f"{tool}: {what}" if isinstance(what, str) else tool
    text = " ".join(text.split())
    return text if len(text) <= _ASKED_MAX else text[: _ASKED_MAX - 1] + "\u2026"


def _opens_room(tool_input: dict[str, Any]) -> bool:
    command = _command(tool_input) or ""
    import shlex

    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    return any(
        _is_tether(w) and words[i + 1 : i + 3] == ["room", "open"] for i, w in enumerate(words)
    )


def refusal(room_id: str, room_dir: str, asked: str) -> str:
    return (
        f"tether: call refused. Inside room {room_id} every read goes through the room's "
        f"budget (rule 1: read only within the budget): the only tool calls allowed are "
        f"`tether wiki read ID` for a listed page and writing the conclusion "
        f"(`tether room conclude FILE` or `-`, or writing {room_dir}/{CONCLUSION_FILE}). "
        f"Refused: {asked}. This refusal is logged in the room's {READS_FILE}."
    )


def read_line(
    asked: str, outcome: str, page_id: str | None = None, page_path: str | None = None
) -> str:
    """One line of a room's reads log: the room's own reads and the gate's refusals alike."""
    import json
    import time

    record = {
        "at": time.time(),
        "asked": asked,
        "outcome": outcome,
        "page_id": page_id,
        "page_path": page_path,
        "pid": os.getppid(),
    }
    return json.dumps(record, ensure_ascii=False) + "\n"


def _log(room_dir: str, asked: str) -> None:
    import fcntl

    with open(os.path.join(room_dir, READS_FILE), "a", encoding="utf-8") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            handle.write(read_line(asked, REFUSED_TOOL))
            handle.flush()
            os.fsync(handle.fileno())
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def check(tool: str | None, payload: dict[str, Any], environ: Any = None) -> str | None:
    """The refusal for this tool call when it runs inside a room and breaks its rule, else None."""
    env = os.environ if environ is None else environ
    room_dir = env.get(ENV_ROOM_DIR)
    if not room_dir or not tool:
        return None
    tool_input = _input(payload)
    if _allowed(tool, tool_input, room_dir):
        return None
    asked = _asked(tool, tool_input)
    room_id = env.get(ENV_ROOM_ID) or os.path.basename(room_dir.rstrip("/"))
    try:
        _log(room_dir, asked)
    except OSError as exc:
        asked += f" (not logged: {exc})"
    if _opens_room(tool_input):
        return f"refused: `room open` inside room {room_id}. {NESTED_HINT}"
    return refusal(room_id, room_dir, asked)
