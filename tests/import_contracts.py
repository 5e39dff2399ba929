"""An import-linter contract type: a package that may import only the standard library.

``tests/test_layers.py`` runs ``lint-imports``, which loads this type from the
``contract_types`` line of ``pyproject.toml`` (``lint-imports`` puts the working
folder on ``sys.path``). The gate runs on every tool call and must start in
milliseconds on any Python the user has, so it may import the standard library,
itself and the packages named in ``allowed_modules``, nothing else: not one of
the distributions installed beside it (computed at each check from
``importlib.metadata``, so a new dependency is forbidden the day it is added),
and not a module that is in no distribution at all.
"""

from __future__ import annotations

import importlib.metadata
import sys

from grimp import ImportGraph
from importlinter.application import output
from importlinter.domain import fields
from importlinter.domain.contract import Contract, ContractCheck
from importlinter.domain.imports import Module


def installed_distributions() -> dict[str, list[str]]:
    """Top-level import name -> the installed distributions that provide it (not tether)."""
    return {
        name: sorted(set(dists))
        for name, dists in importlib.metadata.packages_distributions().items()
        if name not in sys.stdlib_module_names and dists != ["tether"]
    }


class StandardLibraryOnlyContract(Contract):
    """The ``source_module`` package imports the standard library and ``allowed_modules`` only.

    Every import statement in the package counts, those inside functions too (the
    graph is built from the source, not from what one run happened to import).
    """

    type_name = "standard_library_only"

    source_module = fields.ModuleField()
    # modules the package may import besides itself: "a.b" that module alone,
    # "a.b.**" that package and everything in it
    allowed_modules = fields.SetField(subfield=fields.StringField(), required=False)

    # The fields hold values once the contract is built; their declared types are the fields'.
    @property
    def _source(self) -> str:
        module: Module = self.source_module  # type: ignore[assignment]
        return module.name

    @property
    def _also_allowed(self) -> set[str]:
        names: set[str] | None = self.allowed_modules  # type: ignore[assignment]
        return names or set()

    def _allowed(self, imported: str) -> bool:
        own = [f"{self._source}.**", *self._also_allowed]
        for name in own:
            package = name.removesuffix(".**")
            if imported == package or (name != package and imported.startswith(package + ".")):
                return True
        return False

    def check(self, graph: ImportGraph, verbose: bool) -> ContractCheck:
        installed = installed_distributions()
        root = self._source.split(".", 1)[0]
        package = {self._source, *graph.find_descendants(self._source)}
        broken: list[str] = []
        for importer in sorted(package):
            for imported in sorted(graph.find_modules_directly_imported_by(importer)):
                top = imported.split(".", 1)[0]
                if self._allowed(imported) or (top != root and top in sys.stdlib_module_names):
                    continue
                lines = sorted(
                    d["line_number"]
                    for d in graph.get_import_details(importer=importer, imported=imported)
                )
                where = f"{importer} (l. {', '.join(map(str, lines))})"
                if top == root:
                    broken.append(f"{where} imports {imported}: outside the allowed packages")
                elif top in installed:
                    dists = ", ".join(installed[top])
                    broken.append(f"{where} imports {imported}: installed distribution {dists}")
                else:
                    broken.append(f"{where} imports {imported}: not in the standard library")
        return ContractCheck(
            kept=not broken,
            metadata={"broken": broken, "forbidden_distributions": len(installed)},
        )

    def render_broken_contract(self, check: ContractCheck) -> None:
        for line in check.metadata["broken"]:
            output.print_error(line, bold=False)
            output.new_line()
        output.print(
            f"({check.metadata['forbidden_distributions']} installed distributions are forbidden, "
            "and every module outside the standard library)"
        )
