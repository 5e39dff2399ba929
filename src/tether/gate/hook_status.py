"""``tether-gate status``: what the gate knows of a session (calls, budget, lock).

Split from ``gate/hook.py``: no tool call needs it, so the hook path never loads it.
"""

from __future__ import annotations

import sys

from tether.core import session_identity
from tether.core.project import resolve_home
from tether.gate import counter, gate_db, messages
from tether.gate.args import EXIT_INTERNAL, EXIT_OK, USAGE, check_harness, parse_options


def _out(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def _warn(text: str) -> None:
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def _describe(status: dict[str, object]) -> str:
    used, budget = status["calls_used"], status["call_budget"]
    iterations = status["iteration_budget"]
    assert isinstance(used, int) and isinstance(budget, int)
    batches = status["batches"]
    assert isinstance(batches, int) and (iterations is None or isinstance(iterations, int))
    lines = [
        f"session:    {status['session_id']}",
        f"calls:      {messages.calls_used(used, budget)}"
        + (" (locked)" if status["locked"] else ""),
        f"budget:     {status['budget_source']}",
        f"iterations: {messages.iterations_used(batches, iterations)}",
    ]
    if status.get("context_key") and status["context_key"] != status["session_id"]:
        lines.append(f"context:    {status['context_key']} ({status['id_source']})")
    elif status.get("id_source"):
        lines.append(f"id from:    {status['id_source']}")
    if status.get("run_id"):
        lines.append(f"run:        {status['run_id']}")
    if not status.get("known"):
        lines.append("(no call counted yet)")
    return "\n".join(lines)


def run_status(args: list[str]) -> int:
    options = parse_options(args, ("--session", "--harness"), ("--json",))
    if "help" in options:
        _out(USAGE)
        return EXIT_OK
    harness = check_harness(options.get("harness"), required=False)
    explicit = options.get("session")
    resolved = (
        session_identity.Resolved(explicit, "flag")
        if explicit
        else session_identity.resolve(harness, None)
    )
    try:
        conn = gate_db.connect(resolve_home())
        try:
            if resolved.walk is not None:
                from tether.gate import anchor  # the process-tree fallback only

                resolved = anchor.settle(conn, resolved.walk, resolved.source, record=False)
            status = counter.status_row(conn, resolved.key, follow_context=True).as_dict()
        finally:
            conn.close()
    except (gate_db.GateDatabaseError, gate_db.Error, OSError) as exc:
        _warn(f"tether-gate: error: {exc}")
        return EXIT_INTERNAL
    status["context_key"] = resolved.key
    status["id_source"] = resolved.source
    if "json" in options:
        import json

        _out(json.dumps(status, indent=2, sort_keys=True))
    else:
        _out(_describe(status))
    return EXIT_OK
