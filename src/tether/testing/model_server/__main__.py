"""``python -m tether.testing.model_server``: run the scripted model server.

The first line on stdout is the bound port (and nothing else), so a script can
start the server with ``--port 0`` and read where it listens. It serves until
SIGTERM or SIGINT, then exits 0.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from types import FrameType

from tether.testing.model_server.scenario import parse_scenario
from tether.testing.model_server.server import ModelServer


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m tether.testing.model_server",
        description="A scripted model on 127.0.0.1 that agent CLIs can talk to offline. "
        "Prints the bound port on the first stdout line.",
    )
    p.add_argument(
        "--scenario",
        default="five-steps",
        help="five-steps | forever | touch-forever | steps:N (N-1 tool steps, then a final text); "
        "default: five-steps",
    )
    p.add_argument("--port", type=int, default=0, help="port to bind (0: any free port)")
    p.add_argument("--log", metavar="FILE", help="append the request log to FILE as JSONL")
    p.add_argument(
        "--think",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="delay every answer by SECONDS (default 0)",
    )
    return p


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        scenario = parse_scenario(args.scenario)
    except ValueError as exc:
        parser.error(str(exc))
    if args.think < 0:
        parser.error("--think must be >= 0")
    if not 0 <= args.port <= 65535:
        parser.error("--port must be between 0 and 65535")
    done = threading.Event()

    def stop(signum: int, frame: FrameType | None) -> None:
        done.set()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        server = ModelServer(scenario, think=args.think, log_path=args.log, port=args.port)
        server.start()
    except OSError as exc:
        what = f"write the log {args.log}" if exc.filename else f"serve on 127.0.0.1:{args.port}"
        print(f"error: cannot {what}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    try:
        print(server.port, flush=True)
        print(
            f"scripted model ({scenario.name}) on {server.base_url}; stop with SIGTERM or Ctrl-C",
            file=sys.stderr,
            flush=True,
        )
        while not done.wait(3600):
            pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
