"""The gate inside a sandboxed run: ask the run's supervisor, or refuse.

Inside tether's sandbox the gate's database is read-only, so the hook does
not count by itself: it sends its command line and the payload over the
run's Unix socket (``TETHER_GATE_SOCKET``) to the supervisor, which counts
under the run's session (``gate/serve.py``) and sends back what to print and
the exit code. No answer (no socket, a supervisor gone, a garbled reply) is a
refusal: unlike the gate outside a sandbox, this path fails closed, since a
sandboxed agent that could make its gate fail would otherwise get every call
through.

Standard library only, and only ``socket`` on top of what the hook loads.
"""

from __future__ import annotations

import json
import socket
import sys

from tether.gate.payload import read_payload

# the supervisor may wait up to the database's busy timeout (10 s) before it answers
ANSWER_TIMEOUT_S = 25.0
EXIT_REFUSED = 30


def _exchange(path: str, request: bytes) -> dict[str, object]:
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    client.settimeout(ANSWER_TIMEOUT_S)
    try:
        client.connect(path)
        client.sendall(request)
        client.shutdown(socket.SHUT_WR)
        chunks = []
        while chunk := client.recv(65536):
            chunks.append(chunk)
    finally:
        client.close()
    reply = json.loads(b"".join(chunks).decode("utf-8"))
    if not isinstance(reply, dict) or not isinstance(reply.get("code"), int):
        raise ValueError("the answer has no exit code")
    return reply


def _refuse(args: list[str], why: str) -> int:
    text = (
        f"tether-gate: refused: no answer from this run's supervisor ({why}); inside "
        "tether's sandbox a call the supervisor has not counted does not run."
    )
    sys.stderr.write(text + "\n")
    if args[0] != "hook":
        return EXIT_REFUSED
    from tether.gate import contracts

    harness = next((a for a in args if a in contracts.HARNESSES), "claude-code")
    answer = contracts.deny(harness, text)
    if answer:
        sys.stdout.write(answer + "\n")
    return 0


def ask(path: str, args: list[str]) -> int:
    """Run ``tether-gate ARGS`` through the supervisor on ``path``; print its answer."""
    raw, oversized = read_payload() if args[0] == "hook" else (b"", False)
    head = json.dumps({"args": args, "oversized": oversized}).encode() + b"\n"
    try:
        reply = _exchange(path, head + raw)
    except (OSError, ValueError) as exc:
        return _refuse(args, f"{type(exc).__name__}: {exc}")
    if reply.get("hold") is True:
        from tether.gate.runstop import hold_until_stopped

        hold_until_stopped()
    out, err = reply.get("out"), reply.get("err")
    if isinstance(err, str) and err:
        sys.stderr.write(err)
        sys.stderr.flush()
    if isinstance(out, str) and out:
        sys.stdout.write(out)
        sys.stdout.flush()
    code = reply["code"]
    assert isinstance(code, int)
    return code
