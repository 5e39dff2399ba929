"""tether's entry in a TOML MCP configuration: Codex's ``[mcp_servers.tether]`` table and
Vibe's ``[[mcp_servers]]`` entry named ``tether``.

Only tether's own entry changes; every other table, key and comment stays where
it is (tomlkit keeps the layout). A comment written between tether's entry and
the next one belongs, in the file, to tether's entry: it moves with the entry
when the entry is replaced, and to the neighbouring entry when it is removed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.exceptions import TOMLKitError
from tomlkit.items import AoT, Comment, Table, Whitespace

from tether.cli.mcp_server.install_entry import (
    MARK_KEY,
    MARK_VALUE,
    NAME,
    RefusedFileError,
    is_ours,
)

# Codex gives a server 10 s to start and a call 60 s by default: too short for a
# busy machine's first import of the SDK, and for a tick that runs a unit or a
# subagents_wait with a long timeout.
CODEX_STARTUP_TIMEOUT = 30
CODEX_TOOL_TIMEOUT = 3600
# Codex starts a turn without a server still starting once a grace period passes;
# the SDK's first import on a busy machine takes longer than its default.
CODEX_GRACE_KEY = "mcp_optional_startup_grace_ms"
CODEX_GRACE_MS = 30000
CODEX_GRACE_NOTE = "written by tether mcp install"


def _parse(path: Path, text: str | None) -> Any:
    try:
        return tomlkit.parse(text or "")
    except TOMLKitError as exc:
        raise RefusedFileError(path, f"is not valid TOML ({exc})") from None


def _env(argv: list[str]) -> Any:
    env = tomlkit.inline_table()
    env[MARK_KEY] = MARK_VALUE
    return env


def codex_change(
    path: Path, text: str | None, argv: list[str] | None, *, force: bool = False
) -> str | None:
    doc = _parse(path, text)
    servers = doc.get("mcp_servers")
    if servers is not None and not isinstance(servers, dict):
        raise RefusedFileError(path, "has an mcp_servers that is not a table")
    grace = doc.get(CODEX_GRACE_KEY)
    grace_ours = grace is not None and CODEX_GRACE_NOTE in (grace.trivia.comment or "")
    present = servers is not None and NAME in servers
    if servers is not None and present and not force and not is_ours(servers[NAME].unwrap()):
        raise RefusedFileError.not_ours(path, uninstall=argv is None)
    if argv is None:
        if servers is None or not present:
            return text
        _hand_on(_trailing(servers[NAME]), NAME, servers)
        del servers[NAME]
        if not servers:
            del doc["mcp_servers"]
        if grace_ours:
            del doc[CODEX_GRACE_KEY]
        return str(tomlkit.dumps(doc))
    if grace is None:
        value = tomlkit.item(CODEX_GRACE_MS)
        value.comment(CODEX_GRACE_NOTE)
        doc.add(CODEX_GRACE_KEY, value)  # tomlkit puts it before the tables
    if servers is None:
        servers = tomlkit.table(is_super_table=True)
        doc["mcp_servers"] = servers
    table = tomlkit.table()
    table["command"] = argv[0]
    table["args"] = argv[1:]
    table["env"] = _env(argv)
    table["startup_timeout_sec"] = CODEX_STARTUP_TIMEOUT
    table["tool_timeout_sec"] = CODEX_TOOL_TIMEOUT
    if present and servers[NAME].unwrap() == table.unwrap() and grace is not None:
        return text
    if present:
        for item in _trailing(servers[NAME]):
            table.value.body.append((None, item))
    servers[NAME] = table
    return str(tomlkit.dumps(doc))


def _trailing(table: Table) -> list[Any]:
    """The comments and blank lines at the end of ``table`` (before the next header)."""
    body = table.value.body
    cut = len(body)
    while (
        cut > 0 and body[cut - 1][0] is None and isinstance(body[cut - 1][1], Comment | Whitespace)
    ):
        cut -= 1
    tail = [item for _, item in body[cut:]]
    return tail if any(isinstance(i, Comment) for i in tail) else []


def _hand_on(keep: list[Any], name: str, siblings: Any) -> None:
    """Give comments written after a removed table to the table before it (or, when it was
    the first, to the one after it), so the file keeps them."""
    if not keep:
        return
    names = list(siblings)
    at = names.index(name)
    before = [siblings[n] for n in names[:at] if isinstance(siblings[n], Table)]
    after = [siblings[n] for n in names[at + 1 :] if isinstance(siblings[n], Table)]
    if before:
        for item in keep:
            before[-1].value.body.append((None, item))
    elif after:
        after[0].value.body[0:0] = [(None, item) for item in keep]


def _vibe_entry(argv: list[str], keep: list[Any]) -> Table:
    table = tomlkit.table()
    table["name"] = NAME
    table["transport"] = "stdio"
    # a list: Vibe splits a string command like a shell would, and a path with a space breaks
    table["command"] = list(argv)
    table["env"] = _env(argv)
    for item in keep:
        table.value.body.append((None, item))
    return table


def vibe_change(
    path: Path, text: str | None, argv: list[str] | None, *, force: bool = False
) -> str | None:
    doc = _parse(path, text)
    listed = doc.get("mcp_servers")
    if listed is not None and not isinstance(listed, AoT):
        raise RefusedFileError(path, "has an mcp_servers that is not an array of tables")
    tables: list[Any] = [] if listed is None else list(listed)
    if not all(isinstance(t, dict) for t in tables):
        raise RefusedFileError(path, "has an mcp_servers entry that is not a table")
    ours = [i for i, t in enumerate(tables) if t.get("name") == NAME]
    if ours and not force and not all(is_ours(tables[i].unwrap()) for i in ours):
        raise RefusedFileError.not_ours(path, uninstall=argv is None)
    if argv is None:
        if not ours:
            return text
        assert listed is not None
        for index in reversed(ours):
            keep = _trailing(tables[index])
            others = [i for i in range(len(tables)) if i not in ours]
            before = [i for i in others if i < index]
            after = [i for i in others if i > index]
            if keep and before:
                for item in keep:
                    tables[before[-1]].value.body.append((None, item))
            elif keep and after:
                tables[after[0]].value.body[0:0] = [(None, item) for item in keep]
            del listed[index]
        if not len(listed):
            del doc["mcp_servers"]
        return str(tomlkit.dumps(doc))
    if len(ours) == 1:
        current = tables[ours[0]]
        wanted = _vibe_entry(argv, [])
        if current.unwrap() == wanted.unwrap():
            return text
        assert listed is not None
        listed[ours[0]] = _vibe_entry(argv, _trailing(current))
        return str(tomlkit.dumps(doc))
    if listed is None:
        listed = tomlkit.aot()
        doc["mcp_servers"] = listed
    for index in reversed(ours):  # several entries of that name: one is enough
        del listed[index]
    listed.append(_vibe_entry(argv, []))
    return str(tomlkit.dumps(doc))
