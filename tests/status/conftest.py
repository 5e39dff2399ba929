from __future__ import annotations

from tests.status.world import world  # noqa: F401  (fixture)
