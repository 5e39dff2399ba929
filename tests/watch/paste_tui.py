"""A stand-in full-screen agent that takes a burst of keys as a paste.

    python paste_tui.py OUT

Like Claude Code's input box: the terminal is raw; keys are read in chunks with
a busy pause between reads; a chunk holding text and Enter together is a paste,
and its Enter becomes part of the text (nothing is submitted). An Enter read on
its own submits the input: OUT gets one line per submitted input. The input is
echoed so the pane shows what was read. OUT's first line is ``<ready>``.
"""

from __future__ import annotations

import os
import sys
import termios
import time
import tty

BUSY_S = 0.3  # the agent's event loop between two reads of its terminal


def main() -> int:
    fd = sys.stdin.fileno()
    saved = termios.tcgetattr(fd)
    tty.setraw(fd)
    buffer = ""
    try:
        with open(sys.argv[1], "a", encoding="utf-8") as out:
            out.write("<ready>\n")
            out.flush()
            while True:
                time.sleep(BUSY_S)
                chunk = os.read(fd, 65536).decode("utf-8", "replace")
                if not chunk:
                    return 0
                if chunk == "\r":
                    if not buffer:
                        continue  # nothing to submit: an empty box ignores Enter
                    out.write(buffer + "\n")
                    out.flush()
                    buffer = ""
                    sys.stdout.write("\r\n> ")
                else:
                    text = chunk.replace("\r", " ")  # a paste: its Enter is text
                    buffer += text
                    sys.stdout.write(text)
                sys.stdout.flush()
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)


if __name__ == "__main__":
    sys.exit(main())
