"""``tether status --watch``: the screen redrawn in place until Ctrl-C.

Drawn on the terminal's alternate screen (restored on exit, so the shell's
scroll-back stays as it was) and cut to the terminal's height, the last
line saying how many were cut, so the top of the screen never scrolls away.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from tether.status.textui import Text, render, terminal_size
from tether.status.view import screen

if TYPE_CHECKING:
    from tether.status.panels import Status

ENTER = "\x1b[?1049h\x1b[?25l"  # alternate screen, cursor hidden
LEAVE = "\x1b[?25h\x1b[?1049l"
HOME = "\x1b[H"
CLEAR_LINE_END = "\x1b[K"
CLEAR_BELOW = "\x1b[J"


def fit(lines: list[Text], height: int) -> list[Text]:
    """At most ``height`` lines; when cut, the last one says how many are hidden."""
    if len(lines) <= height:
        return lines
    kept = lines[: max(0, height - 1)]
    return [
        *kept,
        Text.of(f"… {len(lines) - len(kept)} more lines (a taller terminal shows them)", "dim"),
    ]


def frame(status: Status, width: int, height: int, colour: bool) -> str:
    text = render(fit(screen(status, width), height), colour)
    return HOME + text.replace("\n", CLEAR_LINE_END + "\n").rstrip("\n") + CLEAR_BELOW


def redraw_until_interrupted(make: Callable[[], Status], *, interval: float, colour: bool) -> None:
    out = sys.stdout
    out.write(ENTER)
    try:
        while True:
            columns, lines = terminal_size(out)
            out.write(frame(make(), columns, lines, colour))
            out.flush()
            time.sleep(interval)
    except KeyboardInterrupt:
        return
    finally:
        out.write(LEAVE)
        out.flush()
