"""The first program inside a sandbox: network doors, the agent, and who outlived it.

Run by the sandbox backend as ``python -I -S launcher.py REPORT_FD PROXY_PORT
SOCKET [HOST:PORT ...] -- ARGV...``; it imports nothing but the standard
library, and little of it (it is started as a file, on every run), and does
three jobs:

- it opens the sandbox's only ways out: ``PROXY_PORT`` on the sandbox's own
  loopback for the HTTP(S) proxy, and each ``HOST:PORT`` (an allowed loopback
  endpoint, a local model server) at the address the agent already knows; each
  connection is carried over the Unix socket ``SOCKET`` bound in from outside,
  where the allow-list proxy decides (``tether.sandbox.network``);
- it starts the agent (stdin, stdout and stderr are the sandbox's own) and, on
  SIGTERM, passes the signal to every process in the sandbox: a stop reaches the
  background jobs too, not only the agent's process group;
- when the agent has exited it writes to ``REPORT_FD`` the agent's exit status
  (``status N``) and one line per process still alive (``proc PID ARGV``, the
  arguments joined by the unit separator); they die with the sandbox the
  moment this program exits.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import sys
import threading

FORWARD_PREAMBLE = b"TETHER-FORWARD "
BUFFER = 65536


def _pipe(src: socket.socket, dst: socket.socket) -> None:
    try:
        while True:
            data = src.recv(BUFFER)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for sock, how in ((dst, socket.SHUT_WR), (src, socket.SHUT_RD)):
            with contextlib.suppress(OSError):
                sock.shutdown(how)


def _carry(client: socket.socket, path: str, preamble: bytes) -> None:
    outside = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        outside.connect(path)
        if preamble:
            outside.sendall(preamble)
    except OSError:
        client.close()
        outside.close()
        return
    back = threading.Thread(target=_pipe, args=(outside, client), daemon=True)
    back.start()
    _pipe(client, outside)
    back.join()
    client.close()
    outside.close()


def _serve(listener: socket.socket, path: str, preamble: bytes) -> None:
    while True:
        try:
            client, _ = listener.accept()
        except OSError:
            return
        threading.Thread(target=_carry, args=(client, path, preamble), daemon=True).start()


def _listen(host: str, port: int) -> list[socket.socket]:
    """Listening sockets for ``host:port`` (``localhost``: both loopback families)."""
    addresses = [("127.0.0.1", socket.AF_INET), ("::1", socket.AF_INET6)]
    if host != "localhost":
        addresses = [(host, socket.AF_INET6 if ":" in host else socket.AF_INET)]
    listeners = []
    for address, family in addresses:
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((address, port))
        except OSError:
            sock.close()
            continue
        sock.listen(64)
        listeners.append(sock)
    return listeners


def open_doors(proxy_port: int, path: str, forwards: list[str]) -> None:
    doors = [("127.0.0.1", proxy_port, b"")]
    for forward in forwards:
        name, _, number = forward.rpartition(":")
        doors.append((name, int(number), FORWARD_PREAMBLE + forward.encode() + b"\n"))
    for host, port, preamble in doors:
        for listener in _listen(host, port):
            args = (listener, path, preamble)
            threading.Thread(target=_serve, args=args, daemon=True).start()


def _alive_others(agent_pid: int) -> list[tuple[int, list[str]]]:
    """Every process in the sandbox but its init, this program and the agent."""
    mine = os.getpid()
    found = []
    for name in os.listdir("/proc"):  # noqa: PTH208 - the launcher stays lean
        if not name.isdigit() or int(name) in (1, mine, agent_pid):
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as stat:
                state = stat.read().rpartition(b")")[2].split()[0]
            with open(f"/proc/{name}/cmdline", "rb") as cmd:
                argv = [a.decode("utf-8", "replace") for a in cmd.read().split(b"\0") if a]
        except (OSError, IndexError):
            continue
        if state != b"Z":
            found.append((int(name), argv[:8]))
    return found


def _start(command: list[str]) -> int:
    """The agent's pid (fork and exec: no subprocess module to import on every run)."""
    pid = os.fork()
    if pid == 0:
        try:
            os.execvp(command[0], command)  # noqa: S606 - the agent's argv, no shell
        except OSError as exc:
            os.write(2, f"tether sandbox: cannot start {command[0]}: {exc}\n".encode())
        os._exit(127)
    return pid


def _report(fd: int, status: int, others: list[tuple[int, list[str]]]) -> None:
    lines = [f"status {status}"]
    lines += [f"proc {pid} " + "\x1f".join(argv).replace("\n", " ") for pid, argv in others]
    with contextlib.suppress(OSError):
        os.write(fd, ("\n".join(lines) + "\n").encode("utf-8", "replace"))


def main(argv: list[str]) -> int:
    split = argv.index("--")
    report_fd, proxy_port, path = int(argv[1]), int(argv[2]), argv[3]
    command = argv[split + 1 :]
    os.set_inheritable(report_fd, False)
    open_doors(proxy_port, path, argv[4:split])

    def forward_stop(signum: int, frame: object) -> None:
        with contextlib.suppress(OSError):
            os.kill(-1, signum)  # every process of the sandbox but init and this one

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, forward_stop)
    agent = _start(command)
    _, raw = os.waitpid(agent, 0)
    status = os.waitstatus_to_exitcode(raw)
    _report(report_fd, status, _alive_others(agent))
    return status if status >= 0 else 128 - status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
