"""JSON in and out of the hot path without importing :mod:`json`.

``import json`` costs about 10 ms on every tool call: ``json.decoder`` compiles
regular expressions at import, which pulls in ``re``, ``enum`` and
``functools``. The C scanner and string quoting behind :mod:`json` (``_json``)
need none of that, so the gate drives them directly: the same parser, the same
escaping, without the imports. Where ``_json`` is missing (another Python
implementation), :mod:`json` itself is used.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

_WHITESPACE = " \t\n\r"
_INF = float("inf")
_CONSTANTS = {"NaN": float("nan"), "Infinity": _INF, "-Infinity": -_INF}


class _Context:
    """What ``_json.make_scanner`` reads from a decoder: the defaults of json.loads."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    array_hook = None
    parse_float = float
    parse_int = int
    parse_constant = staticmethod(_CONSTANTS.__getitem__)


_scan: Callable[[str, int], tuple[Any, int]] | None
_quote: Callable[[str], str] | None
_quote_utf8: Callable[[str], str] | None
try:
    from _json import encode_basestring as _quote_utf8
    from _json import encode_basestring_ascii as _quote
    from _json import make_scanner as _make_scanner

    _scan = _make_scanner(_Context())  # type: ignore[arg-type]
except ImportError:  # pragma: no cover - CPython always has _json
    _scan = _quote = _quote_utf8 = None


def _skip(text: str, index: int) -> int:
    while index < len(text) and text[index] in _WHITESPACE:
        index += 1
    return index


def loads(data: bytes) -> Any:
    """Decode one JSON document; ValueError (with a position) when it is not one."""
    if _scan is None:  # pragma: no cover
        import json

        return json.loads(data)
    text = data.decode("utf-8")
    start = _skip(text, 0)
    try:
        value, end = _scan(text, start)
    except StopIteration as stop:
        raise ValueError(f"Expecting value: char {stop.value}") from None
    except RecursionError:
        raise ValueError("nested too deeply") from None
    except SystemError:
        # The scanner reports a syntax error through json.decoder.JSONDecodeError,
        # which it finds only when json.decoder is loaded: load it and let json
        # name the error (malformed input only; the hot path never gets here).
        import json

        json.loads(text)
        raise ValueError("not JSON") from None
    end = _skip(text, end)
    if end != len(text):
        raise ValueError(f"Extra data: char {end}")
    return value


def dumps(value: Any) -> str:
    """Encode dicts, lists, strings, numbers, booleans and None as ``json.dumps`` does."""
    if _quote is None:  # pragma: no cover
        import json

        return json.dumps(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return _quote(value)
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        if value == value and value not in (_INF, -_INF):
            return float.__repr__(value)
        raise ValueError(f"{value!r} is not JSON")
    if isinstance(value, dict):
        items = (f"{_quote(str(key))}: {dumps(item)}" for key, item in value.items())
        return "{" + ", ".join(items) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(dumps(item) for item in value) + "]"
    raise TypeError(f"cannot encode {type(value).__name__} as JSON")


ELLIPSIS = "\u2026"


def dumps_clipped(value: Any, limit: int) -> str:
    """JSON of ``value`` (non-ASCII kept), at most ``limit`` characters.

    What fits is ``json.dumps(value, ensure_ascii=False)`` exactly. Longer text
    is cut and ends with an ellipsis (it is then not valid JSON). Encoding stops
    once the limit is passed, and a long string is cut before it is quoted, so a
    Write call carrying a whole file costs no more than a short one.
    """
    if _quote_utf8 is None:  # pragma: no cover
        import json

        text = json.dumps(value, ensure_ascii=False)
    else:
        parts: list[str] = []
        _emit(value, parts, limit + 1)
        text = "".join(parts)
    if len(text) <= limit:
        return text
    return text[: max(limit - 1, 0)] + ELLIPSIS


def _emit(value: Any, parts: list[str], room: int) -> int:
    """Append the JSON of ``value`` to ``parts``; the room left (below 0: stop)."""
    assert _quote_utf8 is not None
    if isinstance(value, str):
        piece = _quote_utf8(value if len(value) <= room else value[:room])
    elif isinstance(value, dict):
        parts.append("{")
        room -= 1
        for index, (key, item) in enumerate(value.items()):
            if room <= 0:
                return room
            piece = ("" if index == 0 else ", ") + _quote_utf8(str(key)) + ": "
            parts.append(piece)
            room = _emit(item, parts, room - len(piece))
        piece = "}"
    elif isinstance(value, list | tuple):
        parts.append("[")
        room -= 1
        for index, item in enumerate(value):
            if room <= 0:
                return room
            if index:
                parts.append(", ")
                room -= 2
            room = _emit(item, parts, room)
        piece = "]"
    else:
        try:
            piece = dumps(value)
        except (TypeError, ValueError):
            piece = _quote_utf8(repr(value))
    parts.append(piece)
    return room - len(piece)
