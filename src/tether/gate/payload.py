"""The hook's payload on stdin, read with a cap: one rule for the gate inside and outside a sandbox.

A payload over the cap is drained (so the writer never blocks) and only its
start is kept, for salvaging the session id from it.
"""

from __future__ import annotations

import sys

MAX_PAYLOAD_BYTES = 16 * 1024 * 1024
SALVAGE_BYTES = 64 * 1024


def read_payload() -> tuple[bytes, bool]:
    """(payload bytes, oversized)."""
    stream = sys.stdin.buffer
    data = stream.read(MAX_PAYLOAD_BYTES + 1)
    if len(data) <= MAX_PAYLOAD_BYTES:
        return data, False
    while stream.read(1024 * 1024):
        pass
    return data[:SALVAGE_BYTES], True
