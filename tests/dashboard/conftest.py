from __future__ import annotations

from tests.dashboard.support import dashboard  # noqa: F401  (fixture)
from tests.status.world import world  # noqa: F401  (fixture)
