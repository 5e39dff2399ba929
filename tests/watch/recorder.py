"""A stand-in orchestrator: reads lines from its terminal, records each with the time.

    python recorder.py OUT

OUT gets one JSON object per line: {"t": epoch seconds, "line": text}; the first
is {"line": "<ready>"} once the terminal is being read.
"""

from __future__ import annotations

import json
import sys
import time


def main() -> int:
    with open(sys.argv[1], "a", encoding="utf-8") as out:
        out.write(json.dumps({"t": time.time(), "line": "<ready>"}) + "\n")
        out.flush()
        for line in sys.stdin:
            out.write(json.dumps({"t": time.time(), "line": line.rstrip("\n")}) + "\n")
            out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
