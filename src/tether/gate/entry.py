"""``tether-gate``'s first module: inside a sandboxed run, only the socket path is loaded.

The console script starts here. With ``TETHER_GATE_SOCKET`` set (a sandboxed
run) a ``hook`` or ``tick`` call is sent to the run's supervisor
(``gate/remote.py``) without importing what counting needs (SQLite, the
counter, the session resolution): that keeps the call over the socket as
cheap as a local one (bench/sandbox.py). Everything else is ``gate/hook.py``.
"""

from __future__ import annotations

import os
import sys


def main() -> int:
    args = sys.argv[1:]
    socket_path = os.environ.get("TETHER_GATE_SOCKET")
    if socket_path and args[:1] in (["hook"], ["tick"]) and not {"-h", "--help"} & set(args):
        import signal

        for name in ("SIGTERM", "SIGINT", "SIGHUP"):  # finish the answer during a stop
            try:  # noqa: SIM105 - contextlib costs an import on every call
                signal.signal(getattr(signal, name), signal.SIG_IGN)
            except (OSError, ValueError, AttributeError):
                pass
        from tether.gate.remote import ask

        return ask(socket_path, args)
    from tether.gate.hook import main as local

    return local()


if __name__ == "__main__":
    sys.exit(main())
