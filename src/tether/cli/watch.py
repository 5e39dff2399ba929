"""``tether watch``: the orchestrator watchdog (``tether subagents`` is its polling side)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from tether.cli.render import print_json
from tether.cli.watch_common import open_store, watch_settings
from tether.cli.watch_status import not_counted_lines, status, wake_lines
from tether.cli.watch_subagents import add_subagent, remove_subagent
from tether.core.errors import UsageError
from tether.run_status import RunStatus

F = TypeVar("F", bound=Callable[..., Any])
_SECONDS = click.FloatRange(min=0, min_open=True)


def _tuning(func: F) -> F:
    """The daemon's timing flags (they override ``[watch]`` in tether.toml)."""
    func = click.option(
        "--wake-min-interval",
        type=click.FloatRange(min=0),
        metavar="S",
        help="At most one wake per S seconds (default 60).",
    )(func)
    func = click.option(
        "--idle-threshold",
        type=_SECONDS,
        metavar="S",
        help="Idle = no orchestrator activity for S seconds (default 45).",
    )(func)
    func = click.option(
        "--interval", type=_SECONDS, metavar="S", help="Seconds between checks (default 30)."
    )(func)
    return func


def _tether_argv() -> list[str]:
    beside = Path(sys.executable).parent / "tether"
    if os.access(beside, os.X_OK):
        return [str(beside)]
    found = shutil.which("tether")
    return [str(Path(found).resolve())] if found else [sys.executable, "-m", "tether.cli.main"]


def _warn(line: str) -> None:
    click.echo(f"tether watch: warning: {line}", err=True)


def _warn_settings(settings: Any, conn: sqlite3.Connection | None = None) -> None:
    from tether.watch.advice import orchestrator_warnings, setting_warnings
    from tether.watch.registry import list_orchestrators

    lines = setting_warnings(settings)
    if conn is not None:
        lines += orchestrator_warnings(list_orchestrators(conn))
    for line in lines:
        _warn(line)


def _stamp(line: str) -> None:
    from datetime import datetime

    click.echo(f"{datetime.now().strftime('%H:%M:%S.%f')[:-3]} {line}")
    sys.stdout.flush()  # a detached daemon writes to a file: no block buffering


# --- tether watch ----------------------------------------------------------------


@click.group(invoke_without_command=True)
@_tuning
@click.option("--detach", is_flag=True, help="Run in the background (needs --pid-file).")
@click.option(
    "--pid-file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the daemon's pid here; removed when it ends.",
)
@click.option("--forever", is_flag=True, help="Do not end when no subagent runs.")
@click.pass_context
def watch(
    ctx: click.Context,
    interval: float | None,
    idle_threshold: float | None,
    wake_min_interval: float | None,
    detach: bool,
    pid_file: Path | None,
    forever: bool,
) -> None:
    """Wake the orchestrator when it sits idle while a subagent runs.

    Without a sub-command: the daemon, in the foreground (SIGTERM ends it
    cleanly). It ends by itself one interval after the last subagent ended.
    """
    if ctx.invoked_subcommand is not None:
        return
    if detach:
        _detach(pid_file, ctx.params)
        return
    settings, home = watch_settings(interval, idle_threshold, wake_min_interval)
    from tether.fs import atomic_write_text
    from tether.watch.daemon import Watchdog
    from tether.watch.pidfile import remove_if_mine, running_daemon

    if pid_file is not None:
        other = running_daemon(pid_file, me=os.getpid())
        if other is not None:
            raise UsageError(f"a watch daemon already runs as pid {other} (pid file {pid_file}).")
    conn = open_store(home)
    _warn_settings(settings, conn)
    dog = Watchdog(settings, home, conn, log=_stamp)

    def _stop(signum: int, _frame: object) -> None:
        dog.stop_event.set()

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    if pid_file is not None:
        atomic_write_text(pid_file, f"{os.getpid()}\n")
    _stamp(
        f"tether watch: watching (interval {settings.interval:g} s, idle threshold "
        f"{settings.idle_threshold:g} s, at most one wake per {settings.wake_min_interval:g} s)"
    )
    from tether.watch.registry import list_orchestrators

    folders = ", ".join(settings.subagents_folders) or "none configured (runs only)"
    _stamp(
        f"tether watch: {len(list_orchestrators(conn))} orchestrator(s) registered; "
        f"subagent folders: {folders}; tmux server: {settings.tmux_socket or 'default'}"
    )
    try:
        final = dog.run(forever=forever)
    finally:
        dog.close()
        conn.close()
        if pid_file is not None:
            remove_if_mine(pid_file, os.getpid())
    _stamp(final)


def _detach(pid_file: Path | None, params: dict[str, Any]) -> None:
    if pid_file is None:
        raise UsageError("--detach needs --pid-file FILE (where the daemon's pid goes).")
    from tether.fs import atomic_write_text
    from tether.watch.endpoints import watch_dir
    from tether.watch.pidfile import running_daemon

    other = running_daemon(pid_file)
    if other is not None:
        raise UsageError(
            f"a watch daemon already runs as pid {other} (pid file {pid_file}); "
            f"stop it first (kill {other}) or use another --pid-file."
        )
    settings, home = watch_settings(
        params["interval"], params["idle_threshold"], params["wake_min_interval"]
    )
    conn = open_store(home)
    try:
        _warn_settings(settings, conn)
    finally:
        conn.close()
    argv = [*_tether_argv(), "watch", "--pid-file", str(pid_file.resolve())]
    for name in ("interval", "idle_threshold", "wake_min_interval"):
        if params[name] is not None:
            argv += [f"--{name.replace('_', '-')}", str(params[name])]
    if params["forever"]:
        argv.append("--forever")
    log_path = watch_dir(home) / "watch.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("ab") as log:
        child = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            close_fds=True,
        )
    atomic_write_text(pid_file, f"{child.pid}\n")
    click.echo(f"tether watch: running as pid {child.pid} (log: {log_path}, pid file: {pid_file})")


@watch.command("once")
@_tuning
@click.option("--json", "as_json", is_flag=True)
def once(
    interval: float | None,
    idle_threshold: float | None,
    wake_min_interval: float | None,
    as_json: bool,
) -> None:
    """Run one check cycle (for tests and cron): detect, wake if due, report."""
    from tether.watch.daemon import Watchdog

    settings, home = watch_settings(interval, idle_threshold, wake_min_interval)
    conn = open_store(home)
    _warn_settings(settings, conn)
    dog = Watchdog(settings, home, conn)
    try:
        report = dog.check()
    finally:
        dog.close()
    if as_json:
        print_json(report.as_dict())
        return
    click.echo(f"{report.running} subagent(s) running")
    for view in report.survey.subagents:
        click.echo(f"  {view.state:<24} {view.subagent.label}" + _wait_text(view, report))
    for line in not_counted_lines(report.survey):
        click.echo(line)
    for decision in report.decisions:
        idle = "" if decision.idle_seconds is None else f", idle {decision.idle_seconds:.0f} s"
        note = f" ({decision.note})" if decision.note else ""
        click.echo(f"orchestrator {decision.name}: {decision.action}{note}{idle}")
    for wake in report.wakes:
        click.echo(f"wake #{wake.id}: {wake.message}")


def _wait_text(view: Any, report: Any) -> str:
    if view.state in ("ended", "killed"):
        return f" — {view.subagent.ended_words()}"
    if view.wait is None or not view.subagent.running:
        return ""
    return f" — {view.wait.describe(report.survey.now)}"


@watch.command("add-orchestrator")
@click.option("--tmux-pane", metavar="%N", help="The orchestrator's tmux pane (e.g. %3).")
@click.option(
    "--tmux-socket",
    metavar="NAME|PATH",
    help="The pane's tmux server: -L NAME or -S PATH (default: [watch] tmux_socket).",
)
@click.option("--pid", type=int, help="The orchestrator's process id.")
@click.option(
    "--log",
    "log_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="A log or transcript file the orchestrator appends to (activity).",
)
@click.option("--run", "run_id", metavar="RUN_ID", help="An orchestrator started by tether run.")
@click.option(
    "--session",
    "sessions",
    multiple=True,
    metavar="ID",
    help="A session id whose hook events are the orchestrator's (repeatable).",
)
@click.option("--harness", help="The orchestrator's agent CLI (claude-code, pi, ...).")
@click.option("--name", help="A name to show in logs.")
@click.option("--json", "as_json", is_flag=True)
def add_orchestrator(
    tmux_pane: str | None,
    tmux_socket: str | None,
    pid: int | None,
    log_file: Path | None,
    run_id: str | None,
    sessions: tuple[str, ...],
    harness: str | None,
    name: str | None,
    as_json: bool,
) -> None:
    """Register the orchestrator to keep awake: --tmux-pane %3 | --pid N [--log FILE] | --run ID."""
    import psutil

    from tether.watch.registry import Registration
    from tether.watch.registry import add_orchestrator as add
    from tether.watch.tmux import Tmux

    if sum(x is not None for x in (tmux_pane, pid, run_id)) != 1:
        raise UsageError("give exactly one of --tmux-pane %N, --pid N or --run RUN_ID.")
    settings, home = watch_settings()
    conn = open_store(home)
    socket = tmux_socket or settings.tmux_socket
    start_time = None
    log_path = str(log_file.resolve()) if log_file is not None else None
    if log_file is not None:
        from tether.watch.advice import log_warning

        warning = log_warning(log_file)
        if warning is not None:
            _warn(warning)
    if run_id is not None:
        from tether.store.runs import get_run

        row = get_run(conn, run_id)
        if row.status != RunStatus.RUNNING or row.agent_pgid is None:
            raise UsageError(f"run {row.id} is {row.status}; only a running run can be registered.")
        pid, run_id = row.agent_pgid, row.id
        log_path = str(Path(row.run_dir) / "events.jsonl")
        sessions += tuple(s for s in (row.session_id, row.harness_session_id) if s)
        harness = harness or row.harness
    if tmux_pane is not None:
        pane = Tmux(socket).pane(tmux_pane)
        if pane is None:
            where = f" on tmux server {socket}" if socket else ""
            raise UsageError(f"no tmux pane {tmux_pane}{where}; `tmux list-panes -a` shows them.")
        # the pane's first process identifies it: a restarted tmux server reuses pane ids
        pid = pane.pane_pid
    if pid is not None:
        try:
            start_time = psutil.Process(pid).create_time()
        except psutil.Error:
            raise UsageError(f"no process {pid}.") from None
    orch = add(
        conn,
        Registration(
            name=name,
            tmux_pane=tmux_pane,
            tmux_socket=socket if tmux_pane else None,
            pid=pid,
            pid_start_time=start_time,
            log_path=log_path,
            run_id=run_id,
            harness=harness,
            sessions=sessions,
        ),
    )
    if as_json:
        print_json(orch.as_dict())
    else:
        click.echo(f"orchestrator {orch.id} ({orch.name}) registered")


@watch.command("remove-orchestrator")
@click.argument("orchestrator_id", type=int)
def remove_orchestrator(orchestrator_id: int) -> None:
    """Stop keeping an orchestrator awake."""
    from tether.watch.registry import remove_orchestrator as remove

    _, home = watch_settings()
    if not remove(open_store(home), orchestrator_id):
        raise UsageError(f"no active orchestrator {orchestrator_id}.")
    click.echo(f"orchestrator {orchestrator_id} removed")


@watch.command("orchestrators")
@click.option("--json", "as_json", is_flag=True)
def orchestrators(as_json: bool) -> None:
    """List the registered orchestrators and the sessions bound to them."""
    from tether.watch.registry import list_orchestrators

    _, home = watch_settings()
    found = list_orchestrators(open_store(home))
    if as_json:
        print_json([o.as_dict() for o in found])
        return
    for o in found:
        where = o.tmux_pane or f"pid {o.pid}"
        click.echo(f"{o.id}: {o.name} ({where}) sessions: {', '.join(o.sessions) or '-'}")


@watch.command("log")
@click.option(
    "--limit", type=click.IntRange(min=1), default=50, show_default=True, help="The newest N wakes."
)
@click.option("--json", "as_json", is_flag=True)
def log(limit: int, as_json: bool) -> None:
    """Every wake: time, reason, subagent, pending tool, channels, outcome, message."""
    from tether.watch.acks import with_acks
    from tether.watch.registry import list_wakes

    _, home = watch_settings()
    conn = open_store(home)
    if as_json:
        print_json([with_acks(home, wake).as_dict() for wake in list_wakes(conn, limit=limit)])
        return
    for line in wake_lines(home, conn, limit):
        click.echo(line)


@watch.command("rewake", hidden=False)
@click.option(
    "--max-wait",
    type=float,
    default=6 * 3600.0,
    show_default=True,
    help="Give up after this many seconds.",
)
def rewake(max_wait: float) -> None:
    """Claude Code Stop hook (asyncRewake): wait for a wake, then exit 2 with the message."""
    from tether.watch.rewake import read_payload, wait_for_wake

    _, home = watch_settings()
    sys.exit(wait_for_wake(home, read_payload(sys.stdin), max_wait=max_wait))


_scope = click.option(
    "--scope", type=click.Choice(["project", "user"]), default="project", show_default=True
)
_project = click.option(
    "--project-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Project root (default: nearest parent with tether.toml, else the cwd).",
)


@watch.command("pi-extension")
@click.option("--install", is_flag=True, help="Write it where Pi loads extensions.")
@_scope
@_project
def pi_extension(install: bool, scope: str, project_dir: Path | None) -> None:
    """Print (or --install) the Pi extension through which the watchdog wakes Pi.

    The tether home of the project is written into it (for --scope user only
    an explicit TETHER_HOME), so Pi finds it without TETHER_HOME.
    """
    from tether.config import load_config
    from tether.core.project import project_root
    from tether.fs import atomic_write_text
    from tether.watch.pi_wake_extension import MARKER, baked_home, install_path, render

    root = (project_dir or Path(project_root())).resolve()
    home = baked_home(scope, load_config(cwd=root).home, os.environ.get("TETHER_HOME"))
    text = render(home)
    if not install:
        click.echo(text, nl=False)
        return
    path = install_path(scope, root, os.environ.get("HOME"), os.environ.get("PI_CODING_AGENT_DIR"))
    if path.exists() and MARKER not in path.read_text("utf-8", errors="replace"):
        raise UsageError(f"{path} exists and was not written by tether; move it away first.")
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, text)
    click.echo(f"wrote {path}")
    if home is not None:
        click.echo(f"tether home: {home}")
    click.echo("note: Pi loads it at its next start (or /reload in a running Pi).")


@watch.command("claude-hook")
@click.option("--install", is_flag=True, help="Merge it into the Claude Code settings file.")
@click.option("--uninstall", is_flag=True, help="Take it out again.")
@_scope
@_project
def claude_hook(install: bool, uninstall: bool, scope: str, project_dir: Path | None) -> None:
    """Print (or --install) the Claude Code Stop hook that lets the watchdog wake Claude."""
    from tether.core.project import project_root
    from tether.fs import atomic_write_text
    from tether.gate.hook_install import config_path
    from tether.watch.rewake import merge_settings

    if not (install or uninstall):
        print_json(merge_settings({}, _tether_argv()))
        return
    root = str(project_dir or project_root())
    path = Path(config_path("claude-code", scope, root))
    try:
        current = json.loads(path.read_text("utf-8")) if path.exists() else {}
    except ValueError as exc:
        raise UsageError(f"{path} is not valid JSON ({exc}); fix it first.") from None
    if not isinstance(current, dict):
        raise UsageError(f"{path} does not hold a JSON object.")
    merged = merge_settings(current, None if uninstall else _tether_argv())
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(merged, indent=2, ensure_ascii=False) + "\n")
    click.echo(f"{'updated' if install else 'cleaned'} {path}")
    if install:
        click.echo("note: Claude Code reads hooks at session start; restart running sessions.")


watch.add_command(status)
watch.add_command(add_subagent)
watch.add_command(remove_subagent)
