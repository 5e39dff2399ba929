"""The gate's side of a sandboxed run: the supervisor counts the agent's calls.

The supervisor of a sandboxed run listens on a Unix socket bound into the
sandbox (``TETHER_GATE_SOCKET`` inside). Each connection carries one
``tether-gate`` command line and, for ``hook``, its payload
(``gate/remote.py``); the answer is what the hook would have printed and its
exit code. The supervisor owns ``gate.db``: the agent cannot reach it.

What the socket serves is narrow on purpose: ``hook`` and ``tick`` only, and
every call counts under the run's own session whatever the payload or a
``--session`` flag says, decided from the run's environment (its room, its
autonomy policy), never from what the caller sends.

Standard library only; one call at a time (the counting is one write
transaction each anyway).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import threading

from tether.gate import contracts, hook
from tether.gate.args import check_harness, parse_options
from tether.gate.payload import MAX_PAYLOAD_BYTES

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

MAX_REQUEST = MAX_PAYLOAD_BYTES + 64 * 1024
READ_TIMEOUT_S = 10.0
_ONE_AT_A_TIME = threading.Lock()


def answer(
    args: list[str], raw: bytes, oversized: bool, session_id: str, env: Mapping[str, str]
) -> dict[str, object]:
    """What ``tether-gate ARGS`` prints and returns for the run ``session_id``."""
    out: list[str] = []
    err: list[str] = []
    held = False
    with _ONE_AT_A_TIME:
        saved = hook._sink, hook._env, hook._forced
        hook._sink, hook._env, hook._forced = (out, err), env, session_id
        hook._held = False
        try:
            code = _dispatch(args, raw, oversized)
        except hook.UsageError as exc:
            err.append(f"tether-gate: usage error: {exc}\n")
            code = hook.EXIT_USAGE
        except Exception as exc:  # the supervisor's bug: refuse, never let it through
            text = f"tether-gate: internal error in the run's supervisor: {exc}"
            err.append(text + "\n")
            code = _refusal(args, text, out)
        finally:
            held, hook._held = hook._held, False
            hook._sink, hook._env, hook._forced = saved
    reply: dict[str, object] = {"code": code, "out": "".join(out), "err": "".join(err)}
    if held:
        # the hook inside the sandbox keeps the answer back until the run's stop lands
        reply["hold"] = True
    return reply


def _refusal(args: list[str], text: str, out: list[str]) -> int:
    if args[:1] != ["hook"]:
        return hook.EXIT_REFUSED
    harness = next((a for a in args if a in contracts.HARNESSES), "claude-code")
    deny = contracts.deny(harness, text)
    if deny:
        out.append(deny + "\n")
    return hook.EXIT_OK


def _dispatch(args: list[str], raw: bytes, oversized: bool) -> int:
    if args[:1] == ["tick"]:
        return hook.run_tick(args[1:])
    if args[:1] != ["hook"]:
        hook._err(
            "tether-gate: refused: this run's gate socket serves only `hook` and `tick` "
            "calls of its own session"
        )
        return hook.EXIT_REFUSED
    options = parse_options(args[1:], ("--harness", "--event"))
    harness = check_harness(options.get("harness"), required=True)
    assert harness is not None
    return hook.answer_hook(harness, options.get("event"), raw, oversized)


class GateServer:
    """Serves one run's gate calls on ``path`` until ``stop``."""

    def __init__(self, path: str, session_id: str, env: Mapping[str, str]) -> None:
        self.path = path
        self.session_id = session_id
        self.env = dict(env)
        self._listener: socket.socket | None = None

    def start(self) -> GateServer:
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(self.path)
        listener.listen(64)
        self._listener = listener
        threading.Thread(target=self._accept, daemon=True, name="tether-gate-server").start()
        return self

    def stop(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            with contextlib.suppress(OSError):
                listener.shutdown(socket.SHUT_RDWR)
            listener.close()
        with contextlib.suppress(OSError):
            os.unlink(self.path)

    def _accept(self) -> None:
        while (listener := self._listener) is not None:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        try:
            client.settimeout(READ_TIMEOUT_S)
            data = b""
            while len(data) <= MAX_REQUEST and (chunk := client.recv(65536)):
                data += chunk
            head, _, raw = data.partition(b"\n")
            request = json.loads(head.decode("utf-8"))
            args = request.get("args") if isinstance(request, dict) else None
            if not isinstance(args, list) or not args or not all(isinstance(a, str) for a in args):
                raise ValueError("no command line")
            oversized = bool(request.get("oversized")) or len(raw) > MAX_PAYLOAD_BYTES
            payload = raw[:MAX_PAYLOAD_BYTES]
            reply = answer(args, payload, oversized, self.session_id, self.env)
            client.sendall(json.dumps(reply).encode("utf-8"))
        except (OSError, ValueError):
            pass  # no answer: the caller refuses the call
        finally:
            client.close()
