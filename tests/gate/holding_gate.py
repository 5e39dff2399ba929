"""``tether-gate`` with one fault, for the crash and busy tests: its counting call
stops inside its open transaction.

    python tests/gate/holding_gate.py MARKER tick --session ID

runs the real gate's ``main`` with ``counter._insert_event`` wrapped: once the call
is counted (its session row updated and its event row written, nothing committed)
it writes its pid to MARKER and waits there, holding ``gate.db``'s write lock,
until the test kills it. A test double: the gate itself has no switch for this.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

from tether.gate import counter, hook


def main() -> int:
    marker, argv = sys.argv[1], sys.argv[2:]
    insert = counter._insert_event

    def insert_and_hold(*args: Any) -> None:
        insert(*args)
        with open(marker, "w", encoding="utf-8") as out:
            out.write(str(os.getpid()))
        time.sleep(3600)

    setattr(counter, "_insert_event", insert_and_hold)  # noqa: B010  (the fault, here only)
    return hook.main(argv)


if __name__ == "__main__":
    sys.exit(main())
