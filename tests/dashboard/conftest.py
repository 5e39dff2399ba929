from __future__ import annotations

from tests.dashboard.support import browser, dashboard, shared_chromium  # noqa: F401  (fixtures)
from tests.status.world import world  # noqa: F401  (fixture)
