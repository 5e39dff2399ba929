from __future__ import annotations

from tests.dashboard.support import (  # noqa: F401  (fixtures)
    browser,
    dashboard,
    reading_dashboard,
    shared_chromium,
)
from tests.status.world import world  # noqa: F401  (fixture)
