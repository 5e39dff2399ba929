"""Reading the process ancestry straight from ``/proc`` (no psutil on the hot path).

Used to find the long-lived agent process behind a tool call, and to tell
whether a command runs inside an agent's process tree.
"""

from __future__ import annotations

import os

from tether.core.agents import basename, is_interpreter, script_of

SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "fish", "ash", "busybox"})
# Programs that only run another program for the duration of one call.
WRAPPERS = frozenset(
    {
        "env",
        "timeout",
        "nice",
        "nohup",
        "setsid",
        "stdbuf",
        "xargs",
        "time",
        "flock",
        "ionice",
        "chrt",
        "taskset",
        "sudo",
        "doas",
        "tether-gate",
        "script",
        "unbuffer",
    }
)
_MAX_DEPTH = 64


class ProcInfo:
    """One process as /proc shows it."""

    __slots__ = ("argv", "comm", "pgrp", "pid", "ppid", "sid", "start_ticks")

    def __init__(
        self,
        pid: int,
        ppid: int,
        pgrp: int,
        sid: int,
        start_ticks: int,
        comm: str,
        argv: tuple[str, ...],
    ) -> None:
        self.pid = pid
        self.ppid = ppid
        self.pgrp = pgrp
        self.sid = sid
        self.start_ticks = start_ticks
        self.comm = comm
        self.argv = argv

    def __repr__(self) -> str:
        return f"ProcInfo(pid={self.pid}, ppid={self.ppid}, comm={self.comm!r}, argv={self.argv!r})"


def _stat(pid: int | str) -> tuple[bytes, list[bytes]] | None:
    """``/proc/PID/stat`` as its command name and the fields after it (the state
    first), or None when the process is gone or unreadable.

    The command name is parenthesised and may itself contain ") ".
    """
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return None
    open_paren, close_paren = stat.find(b"("), stat.rfind(b")")
    if open_paren < 0 or close_paren < 0:
        return None
    return stat[open_paren + 1 : close_paren], stat[close_paren + 2 :].split()


def read_proc(pid: int) -> ProcInfo | None:
    """The process ``pid``, or None when it is gone or unreadable."""
    read = _stat(pid)
    if read is None:
        return None
    name, fields = read
    comm = name.decode("utf-8", "replace")
    try:
        ppid, pgrp, sid = int(fields[1]), int(fields[2]), int(fields[3])
        start_ticks = int(fields[19])
    except (IndexError, ValueError):
        return None
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            raw = handle.read()
    except OSError:
        raw = b""
    argv = tuple(part.decode("utf-8", "replace") for part in raw.split(b"\0") if part)
    return ProcInfo(pid, ppid, pgrp, sid, start_ticks, comm, argv)


def ancestors(start_pid: int) -> list[ProcInfo]:
    """``start_pid`` and its ancestors, nearest first, stopping before pid 1."""
    chain: list[ProcInfo] = []
    pid = start_pid
    seen: set[int] = set()
    while pid > 1 and pid not in seen and len(chain) < _MAX_DEPTH:
        seen.add(pid)
        info = read_proc(pid)
        if info is None:
            break
        chain.append(info)
        pid = info.ppid
    return chain


def is_transient(info: ProcInfo) -> bool:
    """A process that lives for one call only: ``sh -c``, ``env``, ``timeout`` ..."""
    exe = basename(info.argv[0]) if info.argv else info.comm
    if exe.startswith("-"):  # a login shell: "-bash"
        return False
    if exe in SHELLS:
        # "sh -c CMD", "bash -ec CMD" or "bash script.sh" run one command and
        # exit; an interactive or login shell has options only.
        for arg in info.argv[1:]:
            if not arg.startswith("-") or arg.startswith("--"):
                if not arg.startswith("--"):
                    return True
                continue
            if "c" in arg[1:]:
                return True
        return False
    if exe in WRAPPERS:
        return True
    if is_interpreter(exe):
        script, module = script_of(info.argv)
        if module == "tether.gate.hook":
            return True
        if script is not None and basename(script) == "tether-gate":
            return True
    return False


def is_alive(pid: int, start_ticks: int) -> bool:
    """Whether process ``pid`` still runs (not a zombie waiting to be reaped), and is
    the one that started at ``start_ticks``."""
    read = _stat(pid)
    if read is None:
        return False
    fields = read[1]
    try:
        return fields[0] not in (b"Z", b"X") and int(fields[19]) == start_ticks
    except (IndexError, ValueError):
        return False


def unreaped_end(pid: int, parent: int) -> tuple[int | None, int | None] | None:
    """How ``pid``, an ended child of ``parent`` not yet reaped, ended: ``(exit status,
    None)`` or ``(None, signal)``, from the kernel's record (``/proc/PID/stat`` field 52,
    Linux 3.5+). None while it runs, once reaped, for another's child, or when the
    record is not ours to read (the kernel then shows 0, which must not pass for exit 0).
    """
    read = _stat(pid)
    try:
        with open(f"/proc/{pid}/status", "rb") as handle:
            status = handle.read()
    except OSError:
        return None
    if read is None:
        return None
    fields = read[1]
    try:
        state, ppid, code = fields[0], int(fields[1]), int(fields[49])
    except (IndexError, ValueError):
        return None
    if state != b"Z" or ppid != parent or not _readable(status):
        return None
    if os.WIFEXITED(code):
        return os.WEXITSTATUS(code), None
    if os.WIFSIGNALED(code):
        return None, os.WTERMSIG(code)
    return None


def _readable(status: bytes) -> bool:
    """Whether a process's exit record is ours to read: the kernel shows it to a caller
    whose user and group match all of the process's (real, effective, saved)."""
    wanted = {b"Uid:": os.geteuid(), b"Gid:": os.getegid()}
    seen = 0
    for line in status.splitlines():
        parts = line.split()
        if parts and parts[0] in wanted:
            try:
                ids = {int(value) for value in parts[1:4]}
            except ValueError:
                return False
            if ids != {wanted[parts[0]]}:
                return False
            seen += 1
    return seen == len(wanted)


def boot_id() -> str:
    try:
        with open("/proc/sys/kernel/random/boot_id") as handle:
            return handle.read().strip()[:8]
    except OSError:
        return "noboot"


def self_pid() -> int:
    return os.getpid()


class ProcRow:
    """One line of the process table: what a survey of every process needs."""

    __slots__ = ("comm", "pid", "ppid", "start_time")

    def __init__(self, pid: int, ppid: int, comm: str, start_time: float) -> None:
        self.pid = pid
        self.ppid = ppid
        self.comm = comm
        self.start_time = start_time  # seconds since the epoch, as psutil's create_time


def process_table() -> list[ProcRow] | None:
    """Every process from ``/proc``: one read of its ``stat`` each (None without ``/proc``).

    The start time is the boot time plus the start ticks, exactly as psutil computes
    ``create_time``, so the two can be compared. Speed path kept by bench/status.py:
    psutil's import and its per-process objects cost a fresh ``tether status`` more
    than the whole table does.
    """
    boot = _boot_time()
    if boot is None:
        return None
    ticks = os.sysconf("SC_CLK_TCK")
    rows = (_row(name, boot, ticks) for name in os.listdir("/proc") if name.isdigit())
    return [row for row in rows if row is not None]


def has_proc() -> bool:
    """Whether this system has a Linux ``/proc`` (with the boot time) to read."""
    return _boot_time() is not None


def start_time(pid: int) -> float | None:
    """When ``pid`` started (psutil's ``create_time``), None when it is gone or no ``/proc``."""
    boot = _boot_time()
    if boot is None:
        return None
    row = _row(str(pid), boot, os.sysconf("SC_CLK_TCK"))
    return None if row is None else row.start_time


def _row(pid: str, boot: float, ticks: int) -> ProcRow | None:
    read = _stat(pid)
    if read is None:
        return None  # gone since the listing
    name, fields = read
    try:
        ppid, start = int(fields[1]), int(fields[19])
    except (IndexError, ValueError):
        return None
    comm = name.decode("utf-8", "replace")
    return ProcRow(int(pid), ppid, comm, boot + start / ticks)


def _boot_time() -> float | None:
    try:
        with open("/proc/stat", "rb") as handle:
            for line in handle:
                if line.startswith(b"btime"):
                    return float(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None
