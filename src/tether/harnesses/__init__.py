"""Harness adapters, imported only when their harness is asked for.

Which harnesses exist, and where each adapter lives: ``tether.harness_registry``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from tether.core.errors import UnknownNameError
from tether.harness_registry import BUILTIN, known_names, plugins

if TYPE_CHECKING:
    from tether.harnesses.base import Harness


def get_harness(name: str) -> Harness:
    """An adapter instance by its registry name (the CLI's own name)."""
    target = BUILTIN.get(name) or plugins().get(name)
    if target is None:
        raise UnknownNameError("harness", name, known_names())
    module_name, _, attr = target.partition(":")
    cls = getattr(importlib.import_module(module_name), attr)
    harness: Harness = cls()
    return harness
