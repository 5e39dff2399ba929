"""``tether events``: read a harness's event stream offline."""

from __future__ import annotations

import sys
from contextlib import ExitStack
from typing import Any, BinaryIO

import click

from tether.core.errors import UsageError


@click.group()
def events() -> None:
    """Read a harness's machine-readable event stream."""


@events.command("count")
@click.option(
    "--harness",
    "harness_name",
    required=True,
    metavar="NAME",
    help="The harness that printed the stream (claude-code, codex, copilot, pi, vibe, ...).",
)
@click.option(
    "--session",
    "session_path",
    metavar="SESSION_FILE",
    help="The harness's own session/rollout file, for exact iterations where the stream "
    "alone gives only a bound (Codex, Vibe).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the ledger as JSON.")
@click.argument("file", metavar="FILE|-")
def count(harness_name: str, session_path: str | None, as_json: bool, file: str) -> None:
    """Count iterations, tool calls, results and usage in FILE (or stdin with -).

    Reads line by line in constant memory, so it works on a live pipe and on
    files of any size. Malformed and unknown lines are counted, never fatal.
    """
    from tether.events.counting import count_stream, note_for
    from tether.harnesses import get_harness

    harness = get_harness(harness_name)
    if session_path == "-" and file == "-":
        raise UsageError("FILE and --session cannot both be stdin ('-').")
    uses_session = harness.iteration_source == "session_file"
    if session_path is not None and not uses_session:
        click.echo(
            f"tether: note: {harness.name} gives exact iterations in its stream; "
            f"--session {session_path} is not read.",
            err=True,
        )
    with ExitStack() as stack:
        stream = _open(stack, file, "FILE")
        session = _open(stack, session_path, "--session") if session_path is not None else None
        if not uses_session:
            session = None
        ledger = count_stream(harness, stream, session)

    data = ledger.to_dict()
    data["note"] = note_for(ledger)
    if as_json:
        from tether.cli.render import print_json

        print_json(data)
    else:
        _print_ledger(harness.name, data)


def _open(stack: ExitStack, path: str, what: str) -> BinaryIO:
    if path == "-":
        return sys.stdin.buffer
    try:
        stream: BinaryIO = stack.enter_context(open(path, "rb"))  # noqa: SIM115
    except FileNotFoundError:
        raise UsageError(f"{what}: no such file: {path}") from None
    except IsADirectoryError:
        raise UsageError(f"{what}: {path} is a directory, not a file") from None
    except OSError as exc:
        raise UsageError(f"{what}: cannot read {path}: {exc.strerror or exc}") from None
    return stream


def _print_ledger(harness: str, data: dict[str, Any]) -> None:
    from tether.cli.render import print_table

    exact = data["iterations_exact"]
    iterations = f"{data['iterations']}" if exact else f"{data['iterations']} (bound)"
    usage = data["usage"]
    open_calls = ", ".join(f"{c['name']} ({c['call_id']})" for c in data["open_calls"])
    rows: list[tuple[str, Any]] = [
        ("iterations", iterations),
        ("iterations from", data["iteration_source"]),
        ("tool calls", data["tool_calls"]),
        ("tool results", data["tool_results"]),
        ("tool errors", data["tool_errors"]),
        ("open tool calls", data["open_tool_calls"]),
    ]
    if open_calls:
        rows.append(("open calls", open_calls))
    rows += [
        ("session id", data["session_id"] or "-"),
        ("final status", data["final_status"] or "-"),
        ("stop reason", data["stop_reason"] or "-"),
        ("input tokens", usage["input_tokens"]),
        ("output tokens", usage["output_tokens"]),
        ("cache read tokens", usage["cache_read_tokens"]),
        ("cache write tokens", usage["cache_write_tokens"]),
        ("cost (USD)", "-" if usage["cost_usd"] is None else f"{usage['cost_usd']:.6f}"),
        ("malformed lines", data["malformed_lines"]),
        ("unknown lines", data["unknown_lines"]),
        ("warnings", data["warnings"]),
        ("permission requests", data["permission_requests"]),
        ("permission denials", data["permission_denials"]),
        ("events", data["events"]),
    ]
    print_table(f"{harness} events", ["", "value"], rows)
    if data["note"]:
        click.echo(f"note: {data['note']}")
