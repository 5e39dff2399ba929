"""A package whose public names load on first use.

Importing any module of a package runs the package's ``__init__`` first; when
that ``__init__`` imports every module to offer their names, a process that
needs one small module (a constant, a record type) pays for all of them.
``lazy_names`` makes the package offer the same names, each imported from its
home module when first read.
"""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Mapping
from typing import Any


class _LazyPackage(types.ModuleType):
    """A package module that imports a name's home on first use.

    Importing a submodule binds it on its package; where a function has its
    module's name (``tether.loop.tick``, ``tether.outbox.collect``) that would
    hide the function, so the binding is turned into the function, as if the
    package had imported it eagerly.
    """

    _lazy_homes: Mapping[str, str]

    def __getattr__(self, name: str) -> Any:
        home = self.__dict__.get("_lazy_homes", {}).get(name)
        if home is None:
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{self.__name__}.{home}"), name)

    def __setattr__(self, name: str, value: Any) -> None:
        homes = self.__dict__.get("_lazy_homes", {})
        if isinstance(value, types.ModuleType) and homes.get(name) == name:
            value = getattr(value, name)
        super().__setattr__(name, value)


def lazy_names(package: str, homes: Mapping[str, str]) -> None:
    """Make ``package`` offer each name of ``homes`` from its module (name -> module)."""
    module = sys.modules[package]
    module.__dict__["_lazy_homes"] = dict(homes)
    module.__class__ = _LazyPackage
