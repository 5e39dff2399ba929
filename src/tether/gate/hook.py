"""``tether-gate``: the command every tool call of an agent passes.

    tether-gate hook --harness claude-code|codex|copilot|pi|vibe [--event NAME]
    tether-gate tick [--session ID] [--tool NAME] [--harness NAME]
    tether-gate status [--session ID] [--json]

Standard library only (it starts on every tool call); arguments are parsed by
hand because argparse alone costs more than the whole count.

Failure policy. A spent budget fails closed: whenever the gate can tell that
the session is locked, the call is refused, even if the payload is damaged. A
database held by another process fails closed too: a call that cannot be
counted because the file stays busy past the busy timeout is refused (else
holding the write lock would buy unlimited calls). A broken tether fails open:
when the payload cannot be read or the database cannot be opened, created,
migrated or written, the call goes through uncounted with a warning on stderr
(and in the harness's warning field where it has one), because a tool that
blocks every agent on its own bug gets uninstalled; the supervisor's own
tool-call limit from the event stream stays as the second belt. Under
``tether run``, once the supervisor has begun to stop the run, none of these
open paths lets a call through: they refuse (see ``gate/runstop.py``).

A stop never kills the gate mid-answer: the group's SIGTERM (and SIGINT/SIGHUP)
is ignored for the gate's few milliseconds, so a refusal that was being written
still reaches the harness; only the supervisor's SIGKILL after its grace ends it.
"""

from __future__ import annotations

import json
import os
import sys

from tether.core import session_identity
from tether.core.project import ENV_ROOM_DIR, resolve_home
from tether.gate import command_policy, contracts, counter, gate_db, messages, run_rules

# re-exported: tests and the socket server name them through this module
from tether.gate.args import EXIT_INTERNAL as EXIT_INTERNAL
from tether.gate.args import EXIT_OK as EXIT_OK
from tether.gate.args import EXIT_REFUSED as EXIT_REFUSED
from tether.gate.args import EXIT_USAGE as EXIT_USAGE
from tether.gate.args import USAGE as USAGE
from tether.gate.args import UsageError as UsageError
from tether.gate.args import check_harness as _check_harness
from tether.gate.args import parse_options as _parse_options
from tether.gate.payload import MAX_PAYLOAD_BYTES, SALVAGE_BYTES, read_payload

# Set by the supervisor of a sandboxed run: the socket its gate answers on.
SOCKET_ENV = "TETHER_GATE_SOCKET"

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from sqlite3 import Connection
    from typing import Any


# Where the answer goes and whose environment decides it. A hook process
# answers on its own stdout/stderr from its own environment; a run's
# supervisor answering a sandboxed agent's call over the run's socket
# (gate/serve.py) collects the answer and decides from the run's environment,
# every call counted under the run's own session (``_forced``). The server
# sets these under its lock, one call at a time.
_sink: tuple[list[str], list[str]] | None = None
_env: Mapping[str, str] = os.environ
_forced: str | None = None

# Claude Code's Write/Edit payloads carry whole files; 16 MiB holds any sane
# one. Larger payloads are drained unread and treated as malformed.
_SALVAGE_PATTERN = rb'"(?:session_id|sessionId)"\s*:\s*"([^"\\]{1,200})"'


def _answer_batch(batch: counter.BatchOutcome, harness: str) -> int:
    """Tell the harness to stop once its session's iteration budget is spent."""
    if batch.stop and batch.iteration_budget is not None:
        text = messages.iteration_stop(batch.session_id, batch.batches, batch.iteration_budget)
        _err(text)
        _emit(contracts.stop(harness, text))
    return EXIT_OK


def _emit(text: str | None) -> None:
    if text:
        if _sink is not None:
            _sink[0].append(text + "\n")
            return
        sys.stdout.write(text + "\n")
        sys.stdout.flush()


def _err(text: str) -> None:
    if _sink is not None:
        _sink[1].append(text + "\n")
        return
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def _resolve(harness: str | None, payload_session: str | None) -> session_identity.Resolved:
    """The session a call counts under; over a run's socket, always the run's own."""
    if _forced is not None:
        return session_identity.Resolved(_forced, "run-socket")
    return session_identity.resolve(harness, payload_session)


def _salvage_session(raw: bytes) -> str | None:
    """The session id near the head of a damaged payload (re is imported only here)."""
    import re

    match = re.search(_SALVAGE_PATTERN, raw[:SALVAGE_BYTES])
    return match.group(1).decode("utf-8", "replace") if match else None


def _malformed(harness: str, raw: bytes, reason: str) -> int:
    """Fail closed when the session is known to be locked, else open, uncounted."""
    _err(f"tether-gate: warning: {messages.malformed(harness, reason)}")
    resolved = _resolve(harness, _salvage_session(raw))
    try:
        conn = gate_db.connect(resolve_home(_env))
        try:
            resolved = _settled(conn, resolved, record=False)
            state = None if resolved.unresolved else counter.lock_state(conn, resolved.key)
        finally:
            conn.close()
    except (gate_db.GateDatabaseError, gate_db.Error) as exc:
        _err(f"tether-gate: warning: {messages.broken(str(exc))}")
        state = None
    if state is not None and state[1]:
        text = run_rules.locked(resolve_home(_env), _env, state)
        _err(text)
        _emit(contracts.deny(harness, text))
        return EXIT_OK
    return _open_or_closed(harness, messages.malformed(harness, reason))


def _open_or_closed(harness: str, warning: str) -> int:
    """A call the gate could not count: through with a warning, or refused while
    the run it belongs to is being stopped."""
    try:
        from tether.gate import runstop

        closed = runstop.stopping(resolve_home(_env), _env)
    except Exception:
        closed = False
    if closed:
        text = messages.stopping(warning)
        _err(text)
        _emit(contracts.deny(harness, text))
        return EXIT_OK
    _emit(contracts.warning(harness, warning))
    return EXIT_OK


def _held_refusal(home: str, context_key: str) -> str:
    """Why a call the gate could not count (its database stayed busy) is refused.

    WAL lets a reader in while another process holds the write lock, so the
    session's own lock state is read first: a locked session gets its usual
    refusal, any other the message that the database is held.
    """
    state = None
    try:
        conn = gate_db.connect_reader(home)
        try:
            state = counter.lock_state(conn, context_key)
        finally:
            conn.close()
    except (gate_db.GateDatabaseError, gate_db.Error):
        pass
    if state is not None and state[1]:
        return run_rules.locked(home, _env, state)
    return messages.held(gate_db.db_file(home), gate_db.busy_timeout_ms() / 1000)


def run_hook(args: list[str]) -> int:
    options = _parse_options(args, ("--harness", "--event"))
    if "help" in options:
        _emit(USAGE)
        return EXIT_OK
    harness = _check_harness(options.get("harness"), required=True)
    assert harness is not None
    raw, oversized = read_payload()
    return answer_hook(harness, options.get("event"), raw, oversized)


def answer_hook(harness: str, event: str | None, raw: bytes, oversized: bool) -> int:
    """Count and decide one hook payload (``raw``, cut short when ``oversized``)."""
    parsed = _parse_call(harness, event, raw, oversized)
    if isinstance(parsed, int):
        return parsed
    call, payload = parsed
    if call.kind == contracts.KIND_TOOL and _env.get(ENV_ROOM_DIR):
        from tether.gate import roomrule

        refused = roomrule.check(call.tool_name, payload, _env)
        if refused is not None:
            _note_room_refusal(harness, call)
            return _deny(harness, refused)
    resolved = _resolve(harness, call.session_id)
    home = resolve_home(_env)
    try:
        conn = gate_db.connect(home)
        try:
            resolved = _settled(conn, resolved)
            if resolved.unresolved:
                if call.kind == contracts.KIND_TOOL:
                    _deny(harness, messages.unresolved())
                return EXIT_OK
            return _count(conn, home, harness, call, payload, resolved)
        finally:
            conn.close()
    except (gate_db.GateDatabaseError, gate_db.Error, OSError) as exc:
        # resolved is the settled key when settling got that far, as the count used.
        return _uncounted(home, harness, call.kind, resolved.key, exc)


def _parse_call(
    harness: str, event: str | None, raw: bytes, oversized: bool
) -> tuple[contracts.HookCall, Any] | int:
    """The call and its decoded payload, or the exit code of a malformed payload."""
    if oversized:
        return _malformed(harness, raw, f"larger than {MAX_PAYLOAD_BYTES} bytes")
    try:
        payload = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError) as exc:
        what = "empty input" if not raw.strip() else f"not JSON: {exc}"
        return _malformed(harness, raw, what)
    try:
        call = contracts.parse(harness, payload, event)
    except contracts.PayloadError as exc:
        return _malformed(harness, raw, str(exc))
    return call, payload


def _deny(harness: str, text: str) -> int:
    """Refuse the call: the reason on stderr and in the harness's deny answer."""
    _err(text)
    _emit(contracts.deny(harness, text))
    return EXIT_OK


def _count(
    conn: Connection,
    home: str,
    harness: str,
    call: contracts.HookCall,
    payload: Any,
    resolved: session_identity.Resolved,
) -> int:
    """Record the call under its session; only tool calls, batches and model calls decide."""
    run_rules.bind_run_session(conn, resolved, _env)
    seen = _seen(harness, call, resolved)
    if call.kind == contracts.KIND_TOOL:
        return _answer_tool_call(conn, home, harness, call, payload, seen)
    if call.kind == contracts.KIND_BATCH:
        return _answer_batch(counter.count_batch(conn, seen), harness)
    if call.kind == contracts.KIND_MODEL_CALL:
        return _answer_batch(counter.count_model_call(conn, seen), harness)
    counter.record_event(conn, seen)
    return EXIT_OK


def _seen(
    harness: str, call: contracts.HookCall, resolved: session_identity.Resolved
) -> counter.Seen:
    """The call as the gate records it under its session."""
    return counter.Seen(
        resolved.key,
        resolved.source,
        harness,
        call.event,
        call.tool_name,
        call.tool_use_id or call.batch_key,
        call.detail,
    )


def _note_room_refusal(harness: str, call: contracts.HookCall) -> None:
    """Record a call a room's rule refused (uncounted) where the run's supervisor keeps
    the count of the calls it read from the agent's stream: the call is on the stream,
    so the wait of every later call needs it among the calls made (``run_rules.unread``).
    Elsewhere the refusal needs no database."""
    home = resolve_home(_env)
    if run_rules.keeps_count(home, _env, harness) is None:
        return
    try:
        conn = gate_db.connect(home)
        try:
            resolved = _settled(conn, _resolve(harness, call.session_id))
            if not resolved.unresolved:
                run_rules.bind_run_session(conn, resolved, _env)
                counter.record_uncounted(conn, _seen(harness, call, resolved), counter.ROOM_RULE)
        finally:
            conn.close()
    except (gate_db.GateDatabaseError, gate_db.Error, OSError) as exc:
        _err(f"tether-gate: warning: {messages.broken(str(exc))}")


def _answer_tool_call(
    conn: Connection,
    home: str,
    harness: str,
    call: contracts.HookCall,
    payload: Any,
    seen: counter.Seen,
) -> int:
    """Count a tool call; refuse it once the budget is spent, when it belongs to a
    model step past the iteration limit, or when the command policy says."""
    parent = None if _sink is not None else os.getppid()
    refused = run_rules.unread(conn, home, seen, _env, parent)
    if refused is None:
        in_run = _forced is not None or bool(_env.get("TETHER_RUN_ID"))
        model_step = run_rules.model_step(harness, call, home, _env, in_run)
        outcome = counter.count_call(conn, seen, model_step)
        if outcome.allowed:
            if policy := command_policy.check(payload, _env):
                return _deny(harness, policy)
            return EXIT_OK
        refused = run_rules.over(home, seen, outcome, model_step, _env)
    from tether.gate import runstop  # only a refusal needs it

    # The supervisor reads the refusal (to stop the run at the limit it reached),
    # and the run's report names it.
    runstop.record_refusal(home, refused.call, environ=_env)
    if refused.hold:
        _hold()
    return _deny(harness, refused.text)


# Set when the answer to the call being served is to be held until the run's
# stop lands; the socket server passes it on to the hook inside the sandbox.
_held = False


def _hold() -> None:
    global _held
    from tether.gate import runstop

    _held = _sink is not None or runstop.hold_if_supervised(resolve_home(_env), _env)


def _uncounted(home: str, harness: str, kind: str, key: str, exc: Exception) -> int:
    """Answer a call the database could not count (see the failure policy above)."""
    if kind == contracts.KIND_TOOL and gate_db.is_busy(exc):
        # Held past the busy timeout: refuse, else holding the lock buys unlimited calls.
        return _deny(harness, _held_refusal(home, key))
    # A busy file on an event that decides nothing costs only its record:
    # every tool call meanwhile is refused above.
    _err(f"tether-gate: warning: {messages.broken(str(exc))}")
    if kind != contracts.KIND_TOOL:
        _emit(contracts.warning(harness, messages.broken(str(exc))))
        return EXIT_OK
    return _open_or_closed(harness, messages.broken(str(exc)))


def _settled(
    conn: Connection, resolved: session_identity.Resolved, record: bool = True
) -> session_identity.Resolved:
    """The key a process-tree fallback counts under, once the gate's memory is asked."""
    if resolved.walk is None:
        return resolved
    from tether.gate import anchor  # the process-tree fallback only

    return anchor.settle(conn, resolved.walk, resolved.source, record=record)


def _context_for(options: dict[str, str], harness: str | None) -> session_identity.Resolved:
    explicit = options.get("session")
    if _forced is not None:
        return session_identity.Resolved(_forced, "run-socket")
    if explicit:
        return session_identity.Resolved(explicit, "flag")
    return session_identity.resolve(harness, None)


def run_tick(args: list[str]) -> int:
    options = _parse_options(args, ("--session", "--tool", "--harness"))
    if "help" in options:
        _emit(USAGE)
        return EXIT_OK
    harness = _check_harness(options.get("harness"), required=False)
    resolved = _context_for(options, harness)
    home = resolve_home(_env)
    try:
        conn = gate_db.connect(home)
        try:
            resolved = _settled(conn, resolved)
            if resolved.unresolved:
                _err(messages.unresolved())
                return EXIT_REFUSED
            seen = counter.Seen(
                resolved.key, resolved.source, harness or "plain", "tick", options.get("tool")
            )
            outcome = counter.count_call(conn, seen)
        finally:
            conn.close()
    except (gate_db.GateDatabaseError, gate_db.Error, OSError) as exc:
        if gate_db.is_busy(exc):
            _err(_held_refusal(home, resolved.key))
            return EXIT_REFUSED
        _err(f"tether-gate: warning: {messages.broken(str(exc))}")
        from tether.gate import runstop

        if runstop.stopping(home, _env):
            _err(messages.stopping(messages.broken(str(exc))))
            return EXIT_REFUSED
        return EXIT_OK
    if outcome.allowed:
        return EXIT_OK
    from tether.gate import runstop

    refused = run_rules.over(home, seen, outcome, None, _env)
    runstop.record_refusal(home, refused.call, environ=_env)
    _err(refused.text)
    return EXIT_REFUSED


def run_status(args: list[str]) -> int:
    """``tether-gate status`` (its own module: no tool call needs it)."""
    from tether.gate.hook_status import run_status as status

    return status(args)


COMMANDS = {"hook": run_hook, "tick": run_tick, "status": run_status}


def _ignore_stop_signals() -> None:
    """Finish the answer even when the agent's process group is being stopped."""
    import signal

    for name in ("SIGTERM", "SIGINT", "SIGHUP"):
        sig = getattr(signal, name, None)
        if sig is not None:
            try:  # noqa: SIM105 - contextlib costs an import on every call
                signal.signal(sig, signal.SIG_IGN)
            except (OSError, ValueError):
                pass


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in ("-h", "--help"):
        _emit(USAGE)
        return EXIT_OK if args else EXIT_USAGE
    if args[0] == "--version":
        from tether import __version__

        _emit(f"tether-gate {__version__}")
        return EXIT_OK
    command = COMMANDS.get(args[0])
    socket_path = os.environ.get(SOCKET_ENV)
    if socket_path and args[0] in ("hook", "tick") and "--help" not in args and "-h" not in args:
        # inside a sandboxed run: the run's supervisor counts, or the call is refused
        from tether.gate import remote

        if argv is None:
            _ignore_stop_signals()
        return remote.ask(socket_path, args)
    # Only as its own process (the console script): a caller that runs main()
    # in-process keeps its signals, and so do the children it starts later.
    if argv is None and command is not None and args[0] != "status":
        _ignore_stop_signals()
    try:
        if command is None:
            raise UsageError(f"unknown command {args[0]!r}; use hook, tick or status")
        return command(args[1:])
    except UsageError as exc:
        _err(f"tether-gate: usage error: {exc}\n{USAGE}")
        return EXIT_USAGE
    except Exception as exc:
        # tether itself is broken: never block the agent on our own bug.
        _err(f"tether-gate: internal error: {type(exc).__name__}: {exc}")
        if args[0] == "hook":
            harness = next((h for h in contracts.HARNESSES if h in args), "claude-code")
            return _open_or_closed(harness, messages.broken(f"{type(exc).__name__}: {exc}"))
        if args[0] == "tick":
            return EXIT_OK
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
