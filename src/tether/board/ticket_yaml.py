"""Front matter of a ticket: split it (``tether.frontmatter``), parse and write the YAML.

Speed path kept by bench/frontmatter.py: the fast reader is ~10x the YAML loader on a cold tick.

Parsing uses PyYAML's C loader (``yaml.CSafeLoader``). Because constructing
Python objects in PyYAML costs far more than reading the file, the lines tether
itself writes (``key: value`` with a quoted string, a list of quoted strings, a
ticket id, a date, a timestamp, an integer, ``true``/``false``/``null`` or a
plain word) are read by a small exact parser first; any line outside that
subset sends the whole block to the YAML loader. A property test holds the two
to the same result on every block the writer produces.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from datetime import UTC, date, datetime
from functools import cache
from typing import Any

from tether.frontmatter import split_front_matter


# PyYAML loads on first use: the fast reader below reads what tether writes, so a
# reader of a board tether keeps (``tether status``, a tick) may never need it.
@cache
def _loader() -> Any:
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@cache
def _dumper() -> Any:
    import yaml

    base: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    dumper: Any = type("_Dumper", (base,), {})
    dumper.add_representer(datetime, _represent_datetime)
    return dumper


class FrontMatterError(ValueError):
    """The front matter block is not valid YAML (or not closed)."""


def split(text: str) -> tuple[str, str] | None:
    """``(front, body)`` of a ticket text, or ``None`` when it has no front matter.

    The block is found by ``tether.frontmatter``. One blank line after the
    closing fence separates it from the body and is not part of the body. CRLF
    line ends are read as LF.
    """
    if "\r" in text:
        text = text.replace("\r\n", "\n")
    found = split_front_matter(text)
    if found is None:
        return None
    front, body, _ = found
    return front, body[1:] if body.startswith("\n") else body


def join(front_text: str, body: str) -> str:
    """The file text for a front block (ending in a newline) and a body."""
    return f"---\n{front_text}---\n" + (f"\n{body}" if body else "")


# ---------------------------------------------------------------- parsing


# Characters PyYAML accepts in a stream; anything else goes to the loader (which refuses it).
# Compiled on first use: a class over the astral planes takes ~7 ms to compile, more than
# the rest of this module, and only a block with non-ASCII text is tested against it.
@cache
def _not_printable() -> re.Pattern[str]:
    return re.compile(
        "[^\x09\x0a\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]"
    )


_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f]")  # the same test for ASCII-only text
_KEY = r"[a-z_][a-z0-9_]*"
_QUOTED = r'"(?:[^"\\]|\\["\\/bfnrt]|\\u(?![dD][89abAB])[0-9a-fA-F]{4})*"'
_KEY_RE = re.compile(_KEY)
_QUOTED_RE = re.compile(_QUOTED)
_LIST_RE = re.compile(rf"\[(?:{_QUOTED}(?:, {_QUOTED})*)?\]")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")
_INT = re.compile(r"-?(?:0|[1-9][0-9]{0,17})")
_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
_STAMP = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]{1,6}))?Z"
)
# Words YAML 1.1 reads as booleans or null; they are not plain strings.
_SPECIAL = frozenset(
    w
    for base in ("yes", "no", "on", "off", "true", "false", "null")
    for w in (base, base.capitalize(), base.upper())
)
_CONSTANTS: dict[str, Any] = {"true": True, "false": False, "null": None, "~": None, "": None}


class _UnsupportedError(Exception):
    """The block is outside the fast subset; use the YAML loader."""


def _value(raw: str) -> Any:
    if raw in _CONSTANTS:
        return _CONSTANTS[raw]
    first = raw[0]
    if first == '"':
        inner = raw[1:-1]
        if len(raw) > 1 and raw[-1] == '"' and '"' not in inner and "\\" not in inner:
            return inner  # the common case: nothing escaped
        if _QUOTED_RE.fullmatch(raw):
            return json.loads(raw)
    elif first == "[":
        if raw == "[]":
            return []
        if raw.startswith('["') and raw.endswith('"]') and "\\" not in raw:
            items = raw[2:-2].split('", "')
            if not any('"' in item for item in items):
                return items
        if _LIST_RE.fullmatch(raw):
            return json.loads(raw)
    elif first.isdigit() or first == "-":
        if _INT.fullmatch(raw):
            return int(raw)
        if _STAMP.fullmatch(raw):
            return datetime.fromisoformat(raw)  # exactly YAML's reading of this one form
        match = _DATE.fullmatch(raw)
        if match:
            return date(int(match[1]), int(match[2]), int(match[3]))
    elif _WORD.fullmatch(raw) and raw not in _SPECIAL:
        return raw
    raise _UnsupportedError


# Keys already checked against _KEY (there are few distinct ones).
_GOOD_KEYS: dict[str, bool] = {}


def _key_ok(key: str) -> bool:
    ok = _GOOD_KEYS.get(key)
    if ok is None:
        ok = _KEY_RE.fullmatch(key) is not None and key not in _SPECIAL
        if len(_GOOD_KEYS) < 4096:
            _GOOD_KEYS[key] = ok
    return ok


def _fast(text: str) -> dict[str, Any]:
    if (_CONTROL if text.isascii() else _not_printable()).search(text):
        raise _UnsupportedError
    result: dict[str, Any] = {}
    good = _GOOD_KEYS
    word = _WORD.fullmatch
    for line in text.split("\n"):
        if not line:
            continue
        key, sep, raw = line.partition(": ")
        if not sep:
            if line[-1] != ":":
                raise _UnsupportedError
            key, raw = line[:-1], ""
        if good.get(key) is not True and not _key_ok(key):
            raise _UnsupportedError
        # The two commonest values inline: a quoted string with nothing escaped, a plain word.
        first = raw[:1]
        if first == '"':
            inner = raw[1:-1]
            if len(raw) > 1 and raw[-1] == '"' and '"' not in inner and "\\" not in inner:
                result[key] = inner
                continue
        elif first.isalpha() and word(raw) is not None and raw not in _SPECIAL:
            result[key] = raw
            continue
        try:
            result[key] = _value(raw)
        except ValueError:  # an impossible date: let the loader say so
            raise _UnsupportedError from None
    if not result:  # YAML reads an empty block as null, not as a mapping
        raise _UnsupportedError
    return result


def parse(front_text: str) -> Any:
    """The YAML value of a front block; raises ``FrontMatterError`` with the loader's message."""
    try:
        return _fast(front_text)
    except _UnsupportedError:
        pass
    return parse_yaml(front_text)


def parse_yaml(front_text: str) -> Any:
    """The front block through the C YAML loader only."""
    import yaml

    try:
        return yaml.load(front_text, Loader=_loader())  # noqa: S506 - a safe loader
    except yaml.MarkedYAMLError as exc:
        raise FrontMatterError(_describe(exc)) from None
    except yaml.YAMLError as exc:
        raise FrontMatterError(" ".join(str(exc).split())) from None
    except (ValueError, TypeError, OverflowError) as exc:  # e.g. a date 2025-13-01
        raise FrontMatterError(f"bad value: {exc}") from None


def _describe(exc: Any) -> str:
    """The loader's message with lines counted in the file (its ``---`` fence is line 1)."""
    parts: list[str] = []
    if exc.context:
        mark = exc.context_mark
        parts.append(exc.context + (f" (line {mark.line + 2})" if mark is not None else ""))
    if exc.problem:
        mark = exc.problem_mark
        where = f" (line {mark.line + 2}, column {mark.column + 1})" if mark is not None else ""
        parts.append(exc.problem + where)
    return ": ".join(parts) or "invalid YAML"


# ---------------------------------------------------------------- writing


def _represent_datetime(dumper: Any, value: datetime) -> Any:
    return dumper.represent_scalar("tag:yaml.org,2002:timestamp", format_timestamp(value))


# Characters a YAML reader treats as line breaks or refuses; such strings go to the dumper.
_UNSAFE_IN_QUOTES = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]")


def format_timestamp(value: datetime) -> str:
    """ISO 8601 in UTC with a ``Z`` (microseconds only when present)."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    value = value.astimezone(UTC)
    text = value.strftime("%Y-%m-%dT%H:%M:%S")
    if value.microsecond:
        text += f".{value.microsecond:06d}"
    return text + "Z"


def _scalar(value: Any) -> str | None:
    """The one-line form of a value in the fast subset, or ``None`` for the dumper."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        text = str(value)
        return text if _INT.fullmatch(text) else None
    if isinstance(value, datetime):
        return format_timestamp(value)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, str):
        if _WORD.fullmatch(value) and value not in _SPECIAL:
            return value
        if _UNSAFE_IN_QUOTES.search(value):
            return None
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list | tuple) and all(
        isinstance(v, str) and not _UNSAFE_IN_QUOTES.search(v) for v in value
    ):
        return "[" + ", ".join(json.dumps(v, ensure_ascii=False) for v in value) + "]"
    return None


def dump(front: Mapping[str, Any]) -> str:
    """The front block (ending in a newline) for a mapping, keys in the given order."""
    lines: list[str] = []
    for key, value in front.items():
        line = _scalar(value) if isinstance(key, str) and _key_ok(key) else None
        if line is not None:
            lines.append(f"{key}: {line}\n")
        else:
            import yaml

            lines.append(
                yaml.dump(
                    {key: _plain(value)},
                    Dumper=_dumper(),
                    sort_keys=False,
                    allow_unicode=True,
                    default_flow_style=False,
                    width=1 << 30,
                )
            )
    return "".join(lines)


def _plain(value: Any) -> Any:
    """Tuples as lists and mappings as dicts, so the safe dumper accepts them."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value
