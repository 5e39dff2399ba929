"""Data that crosses a package travels as a typed record, not a loose dict.

A public function of ``src/tether`` may not take or give ``dict[str, Any]``
(also inside ``list[...]``, ``tuple[...]`` or ``... | None``) nor answer a bare
``Any`` — except where the dict *is* a document, printed or written as it is:

- a record's own document method (``DOCUMENT_NAMES``: ``as_dict``, ``to_dict``,
  ``to_json``): the record is typed, its document is what ``--json`` prints or
  a file holds;
- a module whose job is somebody else's format (``DOCUMENT_MODULES``, each with
  its reason): an agent CLI's hook payload or settings file, YAML front matter,
  another board's records, the MCP protocol, the fakes' wire formats.

``SHRINKING`` names the public functions that still pass a loose dict today,
each with its reason; it may only shrink: a function on it that is typed (or
gone) must leave it, and no function may join it.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "tether"

DOCUMENT_NAMES = frozenset({"as_dict", "to_dict", "to_json"})

# "path relative to src/tether" (a folder ends with "/") -> why its dicts are documents
DOCUMENT_MODULES: dict[str, str] = {
    "gate/": "the agent CLI's hook payload and settings files, read and written as they are "
    "(standard library only, on every tool call's path)",
    "watch/rewake.py": "Claude Code's settings.json hook entries, merged as they are",
    "board/ticket_yaml.py": "YAML as parsed: the front matter before it is checked",
    "board/interop/": "other boards' records (Backlog.md front matter, Beads JSONL) as they are",
    "cli/mcp_server/": "MCP tool arguments and results: JSON as the protocol carries it",
    "testing/": "the fakes' wire formats (model APIs, hook tool input) as the real CLIs send them",
}

_DOC = "document: "
_TODO = "to type: "

# "path relative to src/tether::qualified name" -> why it still passes a loose dict
SHRINKING: dict[str, str] = {
    # documents under another name: printed, served or written as they are
    "board/ticket.py::jsonable": _DOC + "a front-matter value made JSON for --json",
    "board/ticket.py::ordered": _DOC + "the ticket file's front matter in its written order",
    "board/ticket.py::build": _DOC + "front matter read from a ticket file, checked here",
    "cli/board.py::state_front": _DOC + "front matter a person's flags add to a ticket",
    "config/model.py::Config.settings": _DOC + "the settings as `tether config show` prints them",
    "dashboard/data.py::runs_page": _DOC + "the dashboard API's JSON answer",
    "dashboard/data.py::loop_history": _DOC + "the dashboard API's JSON answer",
    "dashboard/data.py::board_columns": _DOC + "the dashboard API's JSON answer",
    "dashboard/data.py::ticket": _DOC + "the dashboard API's JSON answer",
    "dashboard/app.py::State.look": _DOC + "the dashboard API's JSON answers (overview, status)",
    "dashboard/live.py::Looks.look": _DOC + "the dashboard API's JSON answers (overview, status)",
    "dashboard/outbox.py::proposals": _DOC + "the dashboard API's JSON answer",
    "dashboard/outbox.py::parse_body": _DOC + "a POST's JSON body as the page sent it",
    "dashboard/outbox.py::decide": _DOC + "the dashboard API's JSON answer",
    "dashboard/outbox.py::refused": _DOC + "the dashboard API's JSON answer",
    "dashboard/runview.py::downsample": _DOC + "a run page's series as the API serves it",
    "ingest/manifest.py::load_capture": _DOC + "a capture file as the capturing tool wrote it",
    "ingest/intake.py::Intake.collect": _DOC + "a capture file, kept in the manifest as it is",
    "loop/autonomy.py::Policy.gate_data": _DOC + "the gate's policy file, written as it is",
    "loop/blockers.py::evidence_front": _DOC + "front matter written on a blocked ticket",
    "loop/proposals.py::parking_front": _DOC + "front matter written on a parked ticket",
    "loop/project_board.py::listing": _DOC + "`tether board list --json`",
    "status/collect.py::collect": _DOC + "the status object: `tether status --json`, the dashboard",
    "loop/guard.py::situation": _DOC + "the guard's situation: digested and stored as JSON",
    "loop/tick_memory.py::record_tick": _DOC + "a tick's result, kept as --json printed it",
    "runs/inspect.py::run_status": _DOC + "`run_status` as the MCP tool answers it",
    "runs/outcome.py::RunOutcome.record": _DOC + "run.json, as `tether run --json` prints it",
    "runs/record.py::row_to_record": _DOC + "run.json, as `tether runs --json` prints it",
    "runs/stages.py::StageEnd.parse": _DOC + "a stage as the run's record stores it (JSON)",
    "watch/cycle_report.py::subagents_dict": _DOC + "`tether watch --json`'s subagent list",
    "watch/cycle_report.py::subagent_dict": _DOC + "`tether watch --json`'s subagent entry",
    "watch/endpoints.py::write_endpoint": _DOC + "an endpoint file as an orchestrator gave it",
    "watch/acks.py::acknowledged_at": _DOC + "a wake channel as registry.json holds it",
    "watch/registry.py::update_wake": _DOC + "a wake channel as registry.json holds it",
    "watch/registry.py::swap_channels": _DOC + "wake channels as registry.json holds them",
    # Any by nature
    "cli/main.py::main": "click's standalone answer is untyped",
    "cli/wiki.py::root_option": "a click decorator",
    "fleet/schema.py::server_now": "a SQLAlchemy expression (the database server's clock)",
    # data crossing a package or module as a loose dict
    "room/room.py::room_data": _DOC + "room.json as it is written (from room/brief.py's Brief)",
    "room/state.py::Room.create": _DOC + "room.json, written as it is",
}


@dataclass(frozen=True)
class Loose:
    where: str  # "runs/outcome.py::RunOutcome.record"
    module: str  # "runs/outcome.py"
    name: str  # "record"
    signature: str


def _loose(annotation: ast.expr | None) -> bool:
    return annotation is not None and "dict[str, Any]" in ast.unparse(annotation)


def _bare_any(annotation: ast.expr | None) -> bool:
    return annotation is not None and ast.unparse(annotation) in ("Any", "typing.Any")


def _public(name: str) -> bool:
    return not name.startswith("_") or (name.startswith("__") and name.endswith("__"))


def _signature(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    returns = f" -> {ast.unparse(node.returns)}" if node.returns is not None else ""
    return f"({ast.unparse(node.args)}){returns}"


def _visit(node: ast.AST, module: str, scope: list[str], found: list[Loose]) -> None:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.ClassDef) and _public(child.name):
            _visit(child, module, [*scope, child.name], found)
        elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef) and _public(child.name):
            args = child.args
            params = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
            annotations = [p.annotation for p in params if p is not None]
            if any(_loose(a) for a in [*annotations, child.returns]) or _bare_any(child.returns):
                where = f"{module}::{'.'.join([*scope, child.name])}"
                found.append(Loose(where, module, child.name, _signature(child)))


@functools.cache
def loose_functions() -> tuple[Loose, ...]:
    """Every public function's loose edge; parsed once, the three tests read the same walk."""
    found: list[Loose] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE).as_posix()
        _visit(ast.parse(path.read_text(encoding="utf-8"), str(path)), module, [], found)
    return tuple(found)


def _document_module_of(entry: str, module: str) -> bool:
    return module == entry or (entry.endswith("/") and module.startswith(entry))


def _document_module(module: str) -> bool:
    return any(_document_module_of(entry, module) for entry in DOCUMENT_MODULES)


def _excused(f: Loose) -> bool:
    return f.name in DOCUMENT_NAMES or _document_module(f.module) or f.where in SHRINKING


def test_no_public_function_passes_a_loose_dict() -> None:
    loose = [f for f in loose_functions() if not _excused(f)]
    assert not loose, (
        "give these a typed record (a dataclass or msgspec Struct, as the package does), "
        "or name the document method as_dict/to_dict/to_json:\n"
        + "\n".join(f"{f.where}{f.signature}" for f in loose)
    )


def test_the_list_only_shrinks() -> None:
    still = {f.where for f in loose_functions()}
    stale = [where for where in SHRINKING if where not in still]
    assert not stale, f"typed now (or gone): remove from SHRINKING: {stale}"


def test_every_document_module_still_holds_a_document() -> None:
    modules = {f.module for f in loose_functions()}
    unused = [m for m in DOCUMENT_MODULES if not any(_document_module_of(m, x) for x in modules)]
    assert not unused, f"no loose dict there any more: remove from DOCUMENT_MODULES: {unused}"
