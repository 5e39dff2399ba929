"""The session stamp: the last line of every report, note, hand-off and receipt.

Why it exists and where it is written: docs/explanation/the-session-stamp.md.

``session: <session-id> | <agent>@<host> | YYYY-MM-DD``. The session is the
explicit value, then ``TETHER_SESSION_ID``, then the harness's own session
variable (``HARNESS_VARS``: ``CLAUDE_CODE_SESSION_ID``, ``CODEX_THREAD_ID``, …),
else ``unknown``: never guessed. A subagent inherits its parent's variables, so
it stamps with its parent's session. Standard library only, so every layer above
the gate may use it; the gate's hook does not import it.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from tether.core.session_identity import HARNESS_VARS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

UNKNOWN = "unknown"
# A stamp line as session_line writes it (also indented under a list item).
STAMP_LINE = re.compile(r"^\s*session: [^|\n]* \| [^|\n]*@[^|\n]* \| [^|\n]*$")


def session_line(session_id: str | None, agent: str | None, host: str | None, day: str) -> str:
    """The stamp: any part not known is ``unknown``, never guessed."""
    return f"session: {session_id or UNKNOWN} | {agent or UNKNOWN}@{host or UNKNOWN} | {day}"


def stamp_session(env: Mapping[str, str], explicit: str | None = None) -> str | None:
    """The session a stamp names: ``explicit``, then ``TETHER_SESSION_ID``, then each
    harness's own session variable, else None (written ``unknown``)."""
    if explicit:
        return explicit
    value = env.get("TETHER_SESSION_ID")
    if value:
        return value
    for names in HARNESS_VARS.values():
        for name in names:
            value = env.get(name)
            if value:
                return value
    return None


def hostname() -> str | None:
    # imported here: readers that only recognise a stamp (the loop's TODO items, at
    # every tick) never write one
    import socket

    try:
        return socket.gethostname() or None
    except OSError:
        return None


def stamp(
    env: Mapping[str, str],
    agent: str,
    *,
    explicit: str | None = None,
    day: str | None = None,
) -> str:
    """The stamp of ``agent`` (``tether-loop``, ``tether-room``, …) for the session of ``env``."""
    when = day or datetime.now(UTC).date().isoformat()
    return session_line(stamp_session(env, explicit), agent, hostname(), when)


def is_stamp(line: str) -> bool:
    return STAMP_LINE.match(line) is not None


def with_stamp(text: str, line: str) -> str:
    """``text`` ending with ``line`` as its last line: a stamp already at its end is replaced."""
    lines = text.rstrip().splitlines()
    while lines and (is_stamp(lines[-1]) or not lines[-1].strip()):
        lines.pop()
    body = "\n".join(lines)
    return f"{body}\n\n{line}\n" if body else f"{line}\n"
