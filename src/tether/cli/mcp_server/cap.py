"""Every MCP answer within a size cap, and saying so when it was cut.

An agent CLI refuses a tool answer above its own limit (Claude Code: 25,000
tokens by default) and the whole answer is lost; a board, a report or a page can
be larger. The text is cut at the cap with a last line that names the cap; the
JSON keeps its shape (the output schema still holds): the longest strings are
shortened and the longest lists lose their tail until it fits, and a top-level
``truncated`` object says what the cap was and how large the answer would
have been.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec

# a cut string ends with this, so a reader sees it is not the whole value
CUT_MARK = " […]"
# texts this short (ids, states, names) are never cut
SHORT = 64
_MAX_ROUNDS = 200


def _size(data: Any) -> int:
    """Characters of ``data`` as compact JSON (as it goes over the wire)."""
    return len(msgspec.json.encode(data).decode("utf-8"))


def cap_text(text: str, cap: int, key: str) -> str:
    """``text`` if it fits in ``cap`` characters, else its head and one line naming the cap."""
    if len(text) <= cap:
        return text
    note = (
        f"\n[tether: answer cut at {cap} characters ({key}); {len(text) - cap} more "
        f"characters were left out]"
    )
    return text[: max(0, cap - len(note))] + note


def _measure(data: Any, path: tuple[Any, ...], best: list[Any]) -> int:
    """``data``'s JSON size, near enough; ``best`` keeps the biggest string or list seen."""
    if isinstance(data, str):
        size = len(data) + 2
        if len(data) <= SHORT:
            return size  # an id, a state, a name: never cut
    elif isinstance(data, dict):
        size = 2 + sum(len(str(k)) + 4 + _measure(v, (*path, k), best) for k, v in data.items())
        return size
    elif isinstance(data, list):
        size = 2 + sum(_measure(v, (*path, i), best) + 2 for i, v in enumerate(data))
        if len(data) < 2:
            return size
    else:
        return len(json.dumps(data))
    if size > best[0]:
        best[:] = [size, path, data]
    return size


def _largest(data: Any) -> tuple[tuple[Any, ...], Any]:
    best: list[Any] = [0, (), None]
    _measure(data, (), best)
    return best[1], best[2]


def _emptied(data: dict[str, Any]) -> dict[str, Any]:
    """Each long value replaced by the empty value of its type; numbers, flags and short
    texts (ids, states) kept."""

    def keep(value: Any) -> Any:
        if isinstance(value, str):
            return value if len(value) <= SHORT else value[: SHORT // 2] + CUT_MARK
        if isinstance(value, list):
            return []
        if isinstance(value, dict):
            return {}
        return value

    return {k: keep(v) for k, v in data.items()}


def _replace(data: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(data, dict):
        return {**data, head: _replace(data[head], rest, value)}
    copy = list(data)
    copy[head] = _replace(copy[head], rest, value)
    return copy


def cap_data(data: dict[str, Any], cap: int, key: str) -> dict[str, Any]:
    """``data`` if its JSON fits in ``cap`` characters, else a shrunk copy with ``truncated``."""
    total = _size(data)
    if total <= cap:
        return data
    budget = cap - 300  # room for the ``truncated`` note itself
    shrunk = data
    for _ in range(_MAX_ROUNDS):
        size = _size(shrunk)
        if size <= budget:
            break
        path, value = _largest(shrunk)
        if isinstance(value, str):
            keep = max(0, len(value) - (size - budget) - len(CUT_MARK))
            keep = min(keep, len(value) // 2)
            shrunk = _replace(shrunk, path, value[:keep] + CUT_MARK)
        elif isinstance(value, list):
            shrunk = _replace(shrunk, path, value[: max(1, len(value) // 2)])
        else:
            break
    if _size(shrunk) > budget:
        shrunk = _emptied(shrunk)
    return {
        **shrunk,
        "truncated": {
            "cap_chars": cap,
            "total_chars": total,
            "note": f"this answer was cut to fit {cap} characters ({key}); lists lost their "
            "tail and long texts end with […]",
        },
    }
