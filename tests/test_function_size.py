"""No function in ``src/`` is over 80 lines or takes more than 6 parameters.

A function that long or that wide does several jobs; split it into named steps,
or give the values that travel together a record of their own. Two kinds of
function are read differently, on purpose:

- a click command's parameters are its flags, each declared and documented by a
  decorator above it (``docs/reference/cli.md``): their number is the command
  line's, so only its length counts;
- an ``__init__`` that only stores each parameter under its own name is a record
  written by hand (the gate's hot path avoids ``dataclasses``): its width is the
  record's.

``SHRINKING`` lists the functions that are over the limits today while their
modules are being rewritten; it may only shrink: a function on it that is within
the limits again must leave it.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
MAX_LINES = 80
MAX_PARAMETERS = 6

# "path relative to src/tether::qualified name" -> why it is still over the limits
# Empty: every function is within the limits. One over them is split into named
# steps, not added here.
SHRINKING: dict[str, str] = {}


@dataclass(frozen=True)
class Function:
    where: str  # "runs/supervisor.py::Supervisor._execute"
    lines: int
    parameters: int
    command: bool  # a click command: its parameters are its flags
    record: bool  # an __init__ that only stores its parameters

    def too_long(self) -> bool:
        return self.lines > MAX_LINES

    def too_wide(self) -> bool:
        return self.parameters > MAX_PARAMETERS and not (self.command or self.record)


def _parameters(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    args = node.args
    names = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
    if names and names[0] in ("self", "cls"):
        names = names[1:]
    return len(names) + (args.vararg is not None) + (args.kwarg is not None)


def _is_command(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    for decorator in node.decorator_list:
        call = decorator.func if isinstance(decorator, ast.Call) else decorator
        if isinstance(call, ast.Attribute) and call.attr in ("command", "group"):
            return True
    return False


def _only_stores(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """An ``__init__`` whose every statement is ``self.<p> = <p>``, once per parameter."""
    if node.name != "__init__":
        return False
    args = node.args
    params = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)} - {"self"}
    stored = set()
    for stmt in node.body:
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue  # the docstring
        if not (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(target := stmt.targets[0], ast.Attribute)
            and isinstance(target.value, ast.Name)
            and target.value.id == "self"
            and isinstance(stmt.value, ast.Name)
            and stmt.value.id == target.attr
            and target.attr in params
        ):
            return False
        stored.add(target.attr)
    return stored == params and not (args.vararg or args.kwarg)


class _Collector(ast.NodeVisitor):
    def __init__(self, module: str) -> None:
        self.module = module
        self.scope: list[str] = []
        self.found: list[Function] = []

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.scope.append(node.name)
        self.generic_visit(node)
        self.scope.pop()

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        assert node.end_lineno is not None
        self.found.append(
            Function(
                where=f"{self.module}::{'.'.join([*self.scope, node.name])}",
                lines=node.end_lineno - node.lineno + 1,
                parameters=_parameters(node),
                command=_is_command(node),
                record=_only_stores(node),
            )
        )
        self.scope.append(node.name)
        self.generic_visit(node)
        self.scope.pop()

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._function(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self._function(node)


@functools.cache
def functions() -> tuple[Function, ...]:
    """Every function in src/tether; parsed once, both tests read the same walk."""
    found: list[Function] = []
    for path in sorted((SRC / "tether").rglob("*.py")):
        collector = _Collector(path.relative_to(SRC / "tether").as_posix())
        collector.visit(ast.parse(path.read_text(encoding="utf-8"), str(path)))
        found.extend(collector.found)
    return tuple(found)


def _describe(f: Function) -> str:
    return f"{f.where}: {f.lines} lines, {f.parameters} parameters"


def test_no_function_is_over_80_lines_or_6_parameters() -> None:
    over = [f for f in functions() if (f.too_long() or f.too_wide()) and f.where not in SHRINKING]
    assert not over, "split these into named steps or records:\n" + "\n".join(
        _describe(f) for f in over
    )


def test_the_allow_list_only_shrinks() -> None:
    by_place = {f.where: f for f in functions()}
    stale = [
        where
        for where in SHRINKING
        if where not in by_place or not (by_place[where].too_long() or by_place[where].too_wide())
    ]
    assert not stale, f"within the limits now (or gone): remove from SHRINKING: {stale}"
