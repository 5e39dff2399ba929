"""Which process a session-id fallback stays on: the one that outlives the calls.

The process walk (:func:`tether.core.session_identity.walk`) cannot tell, on one call,
a wrapper that runs for that call only (``python wrapper.py`` in a process group
or session of its own, a job-control shell's job, an interactive shell fed one
command) from the agent: both look long-lived. Across calls the difference
shows: the agent is still there at the next call, the wrapper is gone. For a
*suspect* process (see :class:`~tether.core.session_identity.Walk`) the gate
remembers, in ``gate.db``'s ``fallback_processes``, each one it saw at a first
call, with the long-lived candidates above it, and decides:

1. the process was seen at an earlier call (it is alive: it is an ancestor of
   this call): it lasts; count under it;
2. it runs the gate itself, or through ``sh -c`` with no one-call process
   between it and the candidate above it (a wrapper the agent started
   directly looks so), and an ancestor is an *anchor* (a process proved to
   outlive the wrappers below it): count under the anchor;
3. it runs the gate as in 2, an earlier first call's process in its place has
   died, and a candidate recorded above that one is an ancestor of this call
   with as many candidates below it now as then (the earlier ones all gone,
   this call's all started after that call): the earlier process was one
   call's wrapper and the candidate is the agent. The candidate becomes an
   anchor and counts the earlier call's session on (a ``contexts`` row); the
   sessions of other first calls it outlived the same way (made side by side)
   are folded into that one;
4. an earlier first call's process in the same place (same kind, same
   candidates above it) has died and this call's process started after that
   call, with no anchor to be found: every call brings a new process and
   nothing tells which one lasts. The call is refused
   (:data:`~tether.core.session_identity.UNRESOLVED`);
5. else it is a first call: count under the process, and remember it.

Standard library only: it runs on the gate's hot path, for suspect fallbacks only.
"""

from __future__ import annotations

import time

from tether.core import process_tree
from tether.core.session_identity import UNRESOLVED, Resolved, Walk, process_key
from tether.gate import gate_db

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3

FIRST = "first"
ANCHOR = "anchor"
# First calls older than this are forgotten; anchors live as long as a session may.
FIRST_TTL_S = 24 * 3600
ANCHOR_TTL_S = 30 * 24 * 3600
# How many recent first calls a call compares itself with.
RECENT_FIRSTS = 64


def _own_start_ticks() -> int:
    info = process_tree.read_proc(process_tree.self_pid())
    return 0 if info is None else info.start_ticks


def _alive(key: str) -> bool:
    """Whether the process behind a ``proc:<boot>:<pid>:<start>`` key still runs."""
    parts = key.split(":")
    if len(parts) != 4 or parts[0] != "proc" or parts[1] != process_tree.boot_id():
        return False
    try:
        return process_tree.is_alive(int(parts[2]), int(parts[3]))
    except ValueError:
        return False


def _known(conn: sqlite3.Connection, key: str) -> bool:
    row = conn.execute(
        "SELECT 1 FROM contexts WHERE context_key = ? UNION ALL "
        "SELECT 1 FROM sessions WHERE session_id = ? UNION ALL "
        "SELECT 1 FROM fallback_processes WHERE process_key = ? LIMIT 1",
        (key, key, key),
    ).fetchone()
    return row is not None


def _session_of(conn: sqlite3.Connection, key: str) -> str:
    row = conn.execute("SELECT session_id FROM contexts WHERE context_key = ?", (key,)).fetchone()
    return key if row is None else str(row[0])


def settle(conn: sqlite3.Connection, walk: Walk, source: str, *, record: bool = True) -> Resolved:
    """The context key a fallback call counts under (see the module's rules).

    With ``record`` false nothing is written (the lock check of a damaged
    payload, ``status``): the answer is the key a counting call would use now.
    """
    pick_key = process_key(walk.pick)
    above_keys = [process_key(info) for info in walk.above]
    # Reads first, outside a write transaction: most calls change nothing.
    resolved, writes = _settle(conn, walk, source, pick_key, above_keys, False)
    if not record or not writes:
        return resolved
    with gate_db.Immediate(conn):
        return _settle(conn, walk, source, pick_key, above_keys, True)[0]


def _settle(
    conn: sqlite3.Connection,
    walk: Walk,
    source: str,
    pick_key: str,
    above_keys: list[str],
    record: bool,
) -> tuple[Resolved, bool]:
    """The answer, and whether it writes (with ``record``) or would write."""
    if _known(conn, pick_key):
        first = conn.execute(
            "SELECT 1 FROM fallback_processes WHERE process_key = ? AND state = ?",
            (pick_key, FIRST),
        ).fetchone()
        if record and first is not None:
            # Alive at a later call: it lasts, and is no evidence of anything.
            conn.execute("DELETE FROM fallback_processes WHERE process_key = ?", (pick_key,))
        return Resolved(pick_key, source), first is not None
    # A process that runs the gate itself, or through ``sh -c`` and was started by
    # a lasting process (no one-call process between): a wrapper the agent
    # started directly, or the agent. Not one started inside a command.
    runs_gate = walk.why == "nearest" or (walk.why == "command-parent" and not walk.inside)
    if runs_gate:
        for key in above_keys:
            row = conn.execute(
                "SELECT 1 FROM fallback_processes WHERE process_key = ? AND state = ?",
                (key, ANCHOR),
            ).fetchone()
            if row is not None:
                return Resolved(key, "process:anchor"), False
    now = time.time()
    firsts = conn.execute(
        "SELECT process_key, why, above, at_ticks FROM fallback_processes WHERE state = ? "
        "ORDER BY at DESC LIMIT ?",
        (FIRST, RECENT_FIRSTS),
    ).fetchall()
    position = {key: index for index, key in enumerate(above_keys)}
    replaced = False
    anchor: str | None = None
    outlived: list[str] = []  # the first calls' processes it outlived, newest first
    for first_key, why, above_text, at_ticks in firsts:
        since = int(at_ticks)
        if why != walk.why or walk.pick.start_ticks <= since or _alive(str(first_key)):
            continue  # this call's process was there at that call, or that one lives on
        recorded = str(above_text).split("\n") if above_text else []
        match = _outlived(walk, recorded, position, since) if runs_gate else None
        if match is not None and anchor in (None, match):
            anchor = match
            outlived.append(str(first_key))
        replaced = replaced or recorded == above_keys
    if anchor is not None:
        if record:
            _anchor(conn, anchor, outlived, now)
        return Resolved(anchor, "process:anchor"), True
    if record:
        _remember_first(conn, pick_key, walk.why, above_keys, now)
    if replaced:
        return Resolved("", UNRESOLVED), True
    return Resolved(pick_key, source), True


def _outlived(walk: Walk, recorded: list[str], position: dict[str, int], since: int) -> str | None:
    """The candidate recorded above a dead first pick that is an ancestor of this call,
    in the same place: as many candidates below it now as then, the earlier ones all
    gone, this call's all started after that call."""
    for index, key in enumerate(recorded):
        if key not in position:
            continue
        between = walk.above[: position[key]]
        if (
            position[key] == index
            and all(info.start_ticks > since for info in between)
            and not any(_alive(earlier) for earlier in recorded[:index])
        ):
            return key
        return None
    return None


def _anchor(conn: sqlite3.Connection, key: str, first_keys: list[str], now: float) -> None:
    """``key`` outlived the calls of ``first_keys``: it counts the newest one's session
    on. The sessions of the others (first calls made side by side) are folded into it,
    so that no call of theirs is lost."""
    session = _session_of(conn, first_keys[0])
    conn.execute(
        "INSERT INTO contexts (context_key, session_id, since) VALUES (?, ?, ?) "
        "ON CONFLICT (context_key) DO NOTHING",
        (key, session, now),
    )
    for other in first_keys[1:]:
        if _session_of(conn, other) == other != session:
            _fold(conn, other, session, now)
    conn.execute(
        "INSERT INTO fallback_processes (process_key, state, why, above, at_ticks, at) "
        "VALUES (?, ?, '', '', 0, ?) "
        "ON CONFLICT (process_key) DO UPDATE SET state = excluded.state",
        (key, ANCHOR, now),
    )
    for first_key in first_keys:
        conn.execute("DELETE FROM fallback_processes WHERE process_key = ?", (first_key,))


def _fold(conn: sqlite3.Connection, other: str, session: str, now: float) -> None:
    """Session ``other`` (one wrapper's first call) becomes part of ``session``."""
    row = conn.execute(
        "SELECT calls_used, batches FROM sessions WHERE session_id = ?", (other,)
    ).fetchone()
    if row is not None:
        conn.execute(
            "UPDATE sessions SET calls_used = calls_used + ?, batches = batches + ?, "
            "locked = CASE WHEN calls_used + ? >= call_budget THEN 1 ELSE locked END, "
            "updated_at = ? WHERE session_id = ?",
            (row[0], row[1], row[0], now, session),
        )
        conn.execute("DELETE FROM sessions WHERE session_id = ?", (other,))
    conn.execute("UPDATE events SET session_id = ? WHERE session_id = ?", (session, other))
    conn.execute(
        "INSERT INTO contexts (context_key, session_id, since) VALUES (?, ?, ?) "
        "ON CONFLICT (context_key) DO UPDATE SET session_id = excluded.session_id",
        (other, session, now),
    )


def _remember_first(
    conn: sqlite3.Connection, key: str, why: str, above: list[str], now: float
) -> None:
    conn.execute(
        "DELETE FROM fallback_processes WHERE (state = ? AND at < ?) OR (state = ? AND at < ?)",
        (FIRST, now - FIRST_TTL_S, ANCHOR, now - ANCHOR_TTL_S),
    )
    conn.execute(
        "INSERT OR IGNORE INTO fallback_processes (process_key, state, why, above, at_ticks, at) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        (key, FIRST, why, "\n".join(above), _own_start_ticks(), now),
    )
