"""Front matter: the one rule that splits a Markdown file into its YAML block and its body.

Tickets (``tether.board``) and wiki pages (``tether.wiki``) both use it. The
front matter is the block between a first line ``---`` and the next line that
is ``---`` or ``...``. A byte-order mark before it is ignored and CRLF line
ends are accepted; without a closing line there is no front matter.
"""

from __future__ import annotations

import re

_OPEN = ("---\n", "---\r\n")
_CLOSE = re.compile(r"^(?:---|\.\.\.)\r?$", re.MULTILINE)


def split_front_matter(text: str) -> tuple[str, str, int] | None:
    """``(front matter, body, 1-based line the body starts on)``, or None when there is none."""
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text.startswith(_OPEN):
        return None
    start = text.index("\n") + 1
    close = _CLOSE.search(text, start)
    if close is None:
        return None
    front = text[start : close.start()]
    body = text[close.end() + 1 :]
    return front, body, front.count("\n") + 3
