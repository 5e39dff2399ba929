"""What each MCP tool returns as structured content (its ``outputSchema``) and its hints.

The schemas name the fields a client can rely on and their types; objects stay
open (a later tether may add fields). Every answer may carry ``truncated``
when it was cut to the answer cap (:mod:`tether.cli.mcp_server.cap`). A tool
error's structured content (``error``, ``exit_code``, ``exit_meaning``) is not
held to these: MCP clients check only answers that are not errors.

The hints follow the MCP tool annotations: ``readOnlyHint`` (changes nothing
a person would see; a look may refresh tether's own cache, such as the wiki
index), ``destructiveHint`` (may undo or overwrite work), ``idempotentHint``
(calling again with the same arguments changes nothing more) and
``openWorldHint`` (reaches beyond the project: a model, the network).
"""

from __future__ import annotations

from typing import Any

JsonObject = dict[str, Any]

ROOM_STATUSES = ("ok", "b01", "read-directly")

TRUNCATED: JsonObject = {
    "type": "object",
    "description": "Present when the answer was cut to [mcp] answer_max_chars.",
    "properties": {
        "cap_chars": {"type": "integer"},
        "total_chars": {"type": "integer"},
        "note": {"type": "string"},
    },
    "required": ["cap_chars", "total_chars"],
}


def _opt(kind: str | list[str]) -> JsonObject:
    kinds = [kind] if isinstance(kind, str) else kind
    return {"type": [*kinds, "null"]}


def obj(properties: dict[str, Any], required: tuple[str, ...] = ()) -> JsonObject:
    """An open object schema with ``properties``, every one of ``required`` present."""
    return {"type": "object", "properties": properties, "required": list(required)}


def answer(properties: dict[str, Any], required: tuple[str, ...] = ()) -> JsonObject:
    """A tool's whole structured content: ``properties`` and the cut note."""
    return obj({**properties, "truncated": TRUNCATED}, required)


_STR, _INT, _BOOL, _NUM = (
    {"type": "string"},
    {"type": "integer"},
    {"type": "boolean"},
    {"type": "number"},
)
_LIST = {"type": "array"}
_STRS = {"type": "array", "items": _STR}

SUBAGENT = obj(
    {
        "key": _STR,
        "kind": _STR,
        "label": _opt("string"),
        "state": {"type": "string", "description": "working, waits-for-*, starting or ended"},
        "running": _BOOL,
        "run_id": _opt("string"),
        "cwd": _opt("string"),
    },
    ("key", "state", "running"),
)
NOT_COUNTED = obj(
    {"pid": _INT, "name": _STR, "pane": _opt("string"), "reason": _STR},
    ("pid", "name", "reason"),
)
SUBAGENTS = {
    "running": {**_INT, "description": "How many subagents run."},
    "subagents": {"type": "array", "items": SUBAGENT},
    "not_counted": {"type": "array", "items": NOT_COUNTED},
}

TICKET_FIELDS: dict[str, Any] = {
    "id": _STR,
    "title": _STR,
    "priority": {"type": "string", "enum": ["P1", "P2", "P3"]},
    "created": _STR,
    "state": _STR,
    "reason": _opt("string"),
    "location": {**_STR, "description": "STATE or STATE/reason"},
    "path": _STR,
    "blocked_by": _opt("string"),
    "check": _opt(["string", "array"]),
    "until": _opt("string"),
    "marker": _opt("string"),
    "needs": _opt("string"),
    "runs": _LIST,
    "last_run": _opt("string"),
    "report": _opt("string"),
    "front": {"type": "object"},
}
TICKET_REQUIRED = ("id", "title", "priority", "state", "location", "path")
TICKET = answer({**TICKET_FIELDS, "body": _STR}, (*TICKET_REQUIRED, "body"))

BRIEF_PAGE = obj(
    {"id": _STR, "path": _STR, "title": _STR, "why": _STR, "stale": _BOOL},
    ("id", "path"),
)
BRIEF_FIELDS: dict[str, Any] = {
    "question": _STR,
    "budget": _INT,
    "terms": _STRS,
    "read_directly": {
        **_BOOL,
        "description": "Two pages or fewer: read them directly, no room is needed.",
    },
    "pages": {"type": "array", "items": BRIEF_PAGE},
    "stale": _STRS,
    "cut": {"type": "array", "items": BRIEF_PAGE},
    "cut_total": _INT,
}

OUTPUTS: dict[str, JsonObject] = {
    "subagents_wait": answer(
        {
            "changed": _BOOL,
            "timed_out": _BOOL,
            "changes": {
                "type": "array",
                "items": obj({"key": _STR, "from": _opt("string"), "to": _opt("string")}),
            },
            "orchestrator": {
                **_opt("string"),
                "description": "The registered orchestrator the wait counted for.",
            },
            **SUBAGENTS,
        },
        ("changed", "timed_out", "changes", "running", "subagents"),
    ),
    "subagents_list": answer(SUBAGENTS, ("running", "subagents", "not_counted")),
    "loop_tick": answer(
        {
            "signal": {"type": "string", "description": "continue or a stop"},
            "line": {**_STR, "description": "The TETHER-LOOP signal line."},
            "exit_code": {**_INT, "description": "0 CONTINUE, 10-14 STOP."},
            "at": _STR,
            "dry_run": _BOOL,
            "warnings": _LIST,
            "level1": {"type": "object"},
            "dispatched": _opt("object"),
            "level2": _opt("object"),
            "bundle": _opt("object"),
            "recovered": _LIST,
        },
        ("signal", "line", "exit_code"),
    ),
    "board_list": answer(
        {
            "board": {**_STR, "description": "The board's folder."},
            "counts": {"type": "object", "additionalProperties": _INT},
            "tickets": {"type": "array", "items": obj(TICKET_FIELDS, TICKET_REQUIRED)},
            "informal": _STRS,
            "malformed": {"type": "array", "items": obj({"path": _STR, "error": _STR})},
        },
        ("board", "counts", "tickets", "informal", "malformed"),
    ),
    "board_add": TICKET,
    "board_show": TICKET,
    "room_brief": answer(BRIEF_FIELDS, ("question", "budget", "read_directly", "pages")),
    "room_open": answer(
        {
            "status": {
                "type": "string",
                "enum": list(ROOM_STATUSES),
                "description": "ok: the conclusion passed the check; b01: it passed, but the "
                "budget was hit or a page was missing; read-directly: two pages or fewer, "
                "no room was opened.",
            },
            "room": _opt("string"),
            "folder": _opt("string"),
            "run": _opt("object"),
            "conclusion": _opt("string"),
            "check": _opt("object"),
            "reads": _opt(["object", "array"]),
            "brief": obj(BRIEF_FIELDS),
        },
        ("status", "brief"),
    ),
    "wiki_search": answer(
        {
            "pages": {
                "type": "array",
                "items": obj(
                    {"id": _STR, "path": _STR, "title": _STR, "score": _NUM},
                    ("id", "path", "title", "score"),
                ),
            }
        },
        ("pages",),
    ),
    "wiki_read": answer(
        {
            "id": _STR,
            "room": {**_opt("string"), "description": "The room that counted the read."},
            "used": {**_opt("integer"), "description": "Pages the room has read."},
            "budget": {**_opt("integer"), "description": "The room's budget B."},
            "text": _STR,
        },
        ("id", "room", "used", "budget", "text"),
    ),
    "ingest_next": answer(
        {
            "entry": {
                **_opt("object"),
                "description": "The claimed entry with its instructions; null when nothing waits.",
                "properties": {"id": _STR, "resumed": _BOOL, "instructions": _STR},
            }
        },
        ("entry",),
    ),
    "ingest_end": answer({"lines": _STRS}, ("lines",)),
    "run_status": answer(
        {
            "id": _STR,
            "status": _STR,
            "unit": _opt("string"),
            "profile": _opt("string"),
            "harness": _opt("string"),
            "followed_up_by": _LIST,
        },
        ("id", "status"),
    ),
    "report_show": answer({"run_id": _STR}),
}

# (readOnlyHint, destructiveHint, idempotentHint, openWorldHint)
HINTS: dict[str, tuple[bool, bool, bool, bool]] = {
    # the wait records that its caller is active (the watchdog's view of it)
    "subagents_wait": (False, False, True, False),
    "subagents_list": (True, False, True, False),
    # a tick may dispatch an agent run that changes the project and talks to a model
    "loop_tick": (False, True, False, True),
    "board_list": (True, False, True, False),
    "board_add": (False, False, False, False),
    "board_show": (True, False, True, False),
    "room_brief": (True, False, True, False),
    # a room is an agent run (a model) that reads the wiki and writes only its own folder
    "room_open": (False, False, False, True),
    "wiki_search": (True, False, True, False),
    "wiki_read": (True, False, True, False),
    # asked again, the same session gets its open claim back
    "ingest_next": (False, False, True, False),
    "ingest_end": (False, False, False, False),
    "run_status": (True, False, True, False),
    "report_show": (True, False, True, False),
}


def hints_of(name: str) -> dict[str, bool]:
    read_only, destructive, idempotent, open_world = HINTS[name]
    return {
        "readOnlyHint": read_only,
        "destructiveHint": destructive,
        "idempotentHint": idempotent,
        "openWorldHint": open_world,
    }
