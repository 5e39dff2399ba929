"""tether's agent-facing operations as MCP tools: the table, and calling a tool by name.

Nothing here imports the ``mcp`` SDK; :mod:`tether.cli.mcp_server.server` wraps
these for the protocol, and the reference page is generated from ``TOOLS``.
Every tool calls the same library function as its CLI command
(:mod:`tether.cli.mcp_server.calls`), so the rules (one room at a time, reads
counted against the room, one ingest entry per session, the loop's lock) hold
whichever way an agent comes.

Human-only operations — releasing from quarantine, approving, requeueing,
giving a session a new id, going on in the same context — are not tools.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tether.board.states import State, all_folders, label
from tether.cli.mcp_server.calls import (
    board_add,
    board_list,
    board_show,
    ingest_end,
    ingest_next,
    loop_tick,
    report_show,
    room_brief,
    room_open,
    run_status,
    subagents_list,
    subagents_wait,
    wiki_read,
    wiki_search,
)
from tether.cli.mcp_server.cap import cap_data, cap_text
from tether.cli.mcp_server.outputs import JsonObject
from tether.cli.mcp_server.tool import Tool, check_arguments, text
from tether.core.errors import TetherError
from tether.core.exit_codes import ExitCode

# --- the table ------------------------------------------------------------------------

PATH_MAX = 4096
_ROOT = text(
    "The wiki folder, inside the project (relative to its root) or a folder [mcp] roots "
    "names (default: [wiki] root, else the project root).",
    PATH_MAX,
)
_BOARD = text(
    "The ticket folder, inside the project (relative to its root) or a folder [mcp] roots "
    "names (default: [loop] board, else tickets/).",
    PATH_MAX,
)
_RUN = text("The run id (r-…).", 200, required=True)
_QUESTION = text("The question for the wiki.", 2000, required=True)
_BUDGET = {
    "type": "integer",
    "minimum": 1,
    "maximum": 200,
    "description": "Page budget B (default: [wiki] room_budget, 12).",
}
# what board_add can make: every state folder, each with the fields it needs
STATE_LABELS = [label(state, reason) for state, reason in all_folders()]
STATE_FILTERS = list(dict.fromkeys([*(s.value for s in State), *STATE_LABELS]))
STATE_FIELDS: dict[str, JsonObject] = {
    "blocked_by": text("BLOCKED/*: what blocks the ticket (required there).", 2000),
    "check": text(
        "BLOCKED/*: a ticket id that must be DONE, or a command (split like a shell would, "
        "run without one) whose exit 0 proves the blocker gone (required there).",
        2000,
    ),
    "until": {
        **text("WAITING/* and PARKED/*: a date, YYYY-MM-DD (WAITING needs it or marker).", 10),
        "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$",
    },
    "marker": text(
        "WAITING/* and PARKED/*: a path from the project root whose appearance releases the "
        "ticket (WAITING needs it or until).",
        1000,
    ),
    "needs": text("USER/*: what the user must give (required there).", 2000),
}
_PROFILE = {**text("A profile of tether.toml.", 64), "pattern": "^[A-Za-z0-9][A-Za-z0-9_.-]*$"}

TOOLS: tuple[Tool, ...] = (
    Tool(
        "subagents_wait",
        "Wait for a subagent's state change",
        "Block until a subagent starts, waits for confirmation or input, or ends — or until "
        "`timeout` seconds pass — then return every subagent's state. The call counts as the "
        "calling orchestrator's activity while it waits.",
        {
            "timeout": {
                "type": "number",
                "minimum": 0,
                "maximum": 600,
                "default": 30,
                "description": "Return after this many seconds when nothing changed.",
            }
        },
        (),
        subagents_wait,
        "tether subagents wait --json",
    ),
    Tool(
        "subagents_list",
        "List subagents",
        "Every subagent the watchdog sees and its state (working, waits-for-confirmation, "
        "waits-for-input, ended), and the agents seen but not counted, with the reason.",
        {},
        (),
        subagents_list,
        "tether subagents list --json",
    ),
    Tool(
        "loop_tick",
        "One tick of the work loop",
        "Do one tick: level 1 dispatches one unit to a fresh session, else level 2 asks the "
        "four sources behind the guard. The text ends with the TETHER-LOOP signal line; "
        "`exit_code` is its meaning (0 CONTINUE, 10-14 STOP).",
        {
            "dry_run": {
                "type": "boolean",
                "default": False,
                "description": "Decide and say what would be dispatched; run and move nothing.",
            },
            "profile": {**_PROFILE, "description": "Profile of a dispatched run."},
            "justification": text(
                "Why a profile stronger than the default is needed.", 2000, multi_line=True
            ),
        },
        (),
        loop_tick,
        "tether loop tick --json",
    ),
    Tool(
        "board_list",
        "List the board",
        "Tickets (without bodies), untriaged INBOX notes and files tether cannot read.",
        {
            "state": {
                "type": "string",
                "enum": STATE_FILTERS,
                "description": "Only this state (every reason of it) or STATE/reason.",
            },
            "board": _BOARD,
        },
        (),
        board_list,
        "tether board list --json",
    ),
    Tool(
        "board_add",
        "Add a ticket",
        "Add a ticket (to INBOX unless `state` says otherwise; the next tick triages INBOX). "
        "BLOCKED/* needs `blocked_by` and `check`; WAITING/* needs `until` or `marker`; "
        "USER/* needs `needs`; PARKED/* may take `until` or `marker`.",
        {
            "title": text("The ticket title.", 300, required=True),
            "priority": {
                "type": "string",
                "enum": ["P1", "P2", "P3"],
                "default": "P2",
                "description": "P1 (first) to P3.",
            },
            "body": text("The ticket's Markdown text.", 50_000, multi_line=True),
            "state": {
                "type": "string",
                "enum": STATE_LABELS,
                "default": "INBOX",
                "description": "The state folder the ticket starts in.",
            },
            **STATE_FIELDS,
            "board": _BOARD,
        },
        ("title",),
        board_add,
        'tether board add "TITLE" --json',
    ),
    Tool(
        "board_show",
        "Show a ticket",
        "One ticket: its file as text, its fields as JSON.",
        {
            "ticket_id": {
                **text("The ticket id (T-YYYYMMDD-NNNNNNNNN).", 64, required=True),
                "pattern": "^T-[0-9]{8}-[0-9]{9}$",
            },
            "board": _BOARD,
        },
        ("ticket_id",),
        board_show,
        "tether board show ID --json",
    ),
    Tool(
        "room_brief",
        "Brief a room (W01)",
        "The pages a room would read for `question` within B, why each, stale flags; nothing "
        "is read. `read_directly` true: two pages or fewer, no room needed.",
        {"question": _QUESTION, "budget": _BUDGET, "root": _ROOT},
        ("question",),
        room_brief,
        'tether room brief "QUESTION" --json',
    ),
    Tool(
        "room_open",
        "Open one room (W03)",
        "Open exactly one room for `question` and return its checked conclusion. `status` is "
        "ok (the conclusion passed the check), b01 (it passed, but the budget was hit or a "
        "page was missing: use it, or read the few missing pages directly) or read-directly "
        "(two pages or fewer: no room was opened; read the brief's pages yourself). A "
        "conclusion that fails the check is a tool error (exit 40), a room that ends without "
        "one too (exit 2). Refused inside a room and while another room is open (exit 30).",
        {
            "question": _QUESTION,
            "budget": _BUDGET,
            "profile": {**_PROFILE, "description": "Profile for the room's run."},
            "timeout": {
                "type": "number",
                "exclusiveMinimum": 0,
                "maximum": 86400,
                "description": "Wall-clock cap of the room, in seconds.",
            },
            "root": _ROOT,
        },
        ("question",),
        room_open,
        'tether room open "QUESTION" --json',
    ),
    Tool(
        "wiki_search",
        "Search the wiki",
        "Full-text search (bm25), best pages first.",
        {
            "query": text("The words to find.", 1000, required=True),
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": 100,
                "default": 10,
                "description": "At most this many pages.",
            },
            "root": _ROOT,
        },
        ("query",),
        wiki_search,
        'tether wiki search "QUERY" --json',
    ),
    Tool(
        "wiki_read",
        "Read a wiki page",
        "One page's file. Inside a room the read counts against the room's budget B and is "
        "refused beyond it or off the room's list.",
        {
            "page_id": text("The page id (or its path, alias or title).", 1000, required=True),
            "root": _ROOT,
        },
        ("page_id",),
        wiki_read,
        "tether wiki read ID",
    ),
    Tool(
        "ingest_next",
        "Claim the next ingest entry",
        "Claim exactly one entry from incoming/ (oldest first) for this session and return it "
        "with the ingest instructions; this session's open claim is returned again.",
        {"root": _ROOT},
        (),
        ingest_next,
        "tether ingest next --json",
    ),
    Tool(
        "ingest_end",
        "End the claimed ingest entry",
        "Mark this session's claimed entry done (only this session's own claim: another "
        "session's is refused); returns the fixed next-step line per kind of unit that still "
        "waits (none when nothing waits).",
        {
            "entry": text("This session's claimed entry (default: its only claim).", 255),
            "root": _ROOT,
        },
        (),
        ingest_end,
        "tether ingest end",
    ),
    Tool(
        "run_status",
        "A run's record",
        "One supervised run's record: status, budgets, counts, report path, follow-ups.",
        {"run_id": _RUN},
        ("run_id",),
        run_status,
        "tether runs show RUN_ID --json",
    ),
    Tool(
        "report_show",
        "A run's progress report",
        "The progress report of a limit-stopped run (Markdown text; report.json as JSON).",
        {"run_id": _RUN},
        ("run_id",),
        report_show,
        "tether report RUN_ID",
    ),
)

BY_NAME: dict[str, Tool] = {t.name: t for t in TOOLS}
HUMAN_ONLY = ("release", "approve", "requeue", "session_new", "continue_here")


@dataclass(frozen=True)
class Outcome:
    """A call's result as the server sends it: an error carries the CLI's line and exit."""

    text: str
    data: JsonObject
    is_error: bool


def error_outcome(message: str, code: int) -> Outcome:
    meaning = ExitCode(code).name.lower().replace("_", "-") if code in set(ExitCode) else "error"
    line = f"tether: error: {message}"
    return Outcome(line, {"error": message, "exit_code": code, "exit_meaning": meaning}, True)


def _cap() -> int:
    """The answer cap of the project (``[mcp] answer_max_chars``); the default without one."""
    from tether.cli.mcp_server.scope import served
    from tether.config.mcp import DEFAULT_ANSWER_MAX_CHARS

    try:
        return served().settings.answer_max_chars
    except TetherError:
        return DEFAULT_ANSWER_MAX_CHARS


def _capped(outcome: Outcome, cap: int) -> Outcome:
    key = "[mcp] answer_max_chars"
    return Outcome(
        cap_text(outcome.text, cap, key), cap_data(outcome.data, cap, key), outcome.is_error
    )


def _run(name: str, args: Mapping[str, Any] | None) -> Outcome:
    tool = BY_NAME.get(name)
    if tool is None:
        return error_outcome(f"unknown tool {name[:80]!r}; known: {', '.join(BY_NAME)}", 2)
    try:
        check_arguments(tool, args or {})
        answer = tool.run(args or {})
    except TetherError as exc:
        return error_outcome(str(exc), int(exc.exit_code))
    # an MCP client gets every failure as a tool error, never a protocol error
    except Exception as exc:
        return error_outcome(f"{name}: {type(exc).__name__}: {exc}", int(ExitCode.INTERNAL_ERROR))
    return Outcome(answer.text, answer.data, False)


def call(name: str, args: Mapping[str, Any] | None) -> Outcome:
    """Run tool ``name`` with ``args``: every failure becomes an error outcome (never an
    exception), and every answer fits the cap (``[mcp] answer_max_chars``)."""
    return _capped(_run(name, args), _cap())
