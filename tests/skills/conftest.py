from __future__ import annotations

from tests.install_support import home, project  # noqa: F401  (fixtures)
