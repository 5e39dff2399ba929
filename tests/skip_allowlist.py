"""The skips a CI run may have: every other skip fails the session under ``CI=true``.

Each entry names the test (an exact node id, or a prefix ending in ``::`` or
``/`` for a whole module or folder), a piece of the skip's reason that must
appear in it, and why CI may not run that test. Keep the list short: a test
CI cannot run is a test nobody runs. ``tests/skip_guard.py`` enforces it;
docs/how-to/test-offline.md explains the rule.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Allowed:
    """One skip CI may have."""

    test: str
    reason_contains: str
    why: str

    def matches(self, nodeid: str, reason: str) -> bool:
        if self.test.endswith(("::", "/")):
            named = nodeid.startswith(self.test)
        else:
            named = nodeid == self.test or nodeid.startswith(self.test + "[")
        return named and self.reason_contains in reason


ALLOWED: tuple[Allowed, ...] = ()
