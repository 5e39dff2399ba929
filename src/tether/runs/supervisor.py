"""``tether run``: one agent session working on one unit, on a hard budget.

Wiring only: choosing (profiles), spawning (process), counting (live), writing
down (record, report) each live in their own module.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import threading
import time
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import Any

from tether.config import Config, Profile, load_config
from tether.core.errors import HarnessNotFoundError, UsageError
from tether.core.session_stamp import hostname
from tether.events.accounting import Ledger
from tether.fs import atomic_write_json, atomic_write_text
from tether.gate.runstop import mark_stopping
from tether.harnesses import get_harness
from tether.harnesses.base import Harness, RunSpec, ToolAllowance, bind
from tether.outbox import OUTBOX_ENV
from tether.runs import sandboxing, worktree
from tether.runs.agent_env import agent_env
from tether.runs.budget import Budget
from tether.runs.followup_prompt import compose_prompt
from tether.runs.gate_setup import (
    gate_db_held_open,
    write_run_hooks,
)
from tether.runs.outcome import Ending, RunOutcome, finish_run
from tether.runs.process import spawn_agent
from tether.runs.profiles import choose_budget, choose_profile
from tether.runs.record import RunPaths, new_run_id
from tether.runs.recovery import recover_abandoned
from tether.runs.sandboxed_run import SandboxedRun as _SandboxedRun
from tether.runs.stderr_sink import StderrSink
from tether.runs.watching import watch_agent
from tether.store import state_db
from tether.store.runs import RunRow, get_run, insert_run, update_run


@dataclass(frozen=True)
class RunRequest:
    prompt: str
    profile: str | None = None
    unit: str | None = None
    iterations: int | None = None
    tool_calls: int | None = None
    timeout: float | None = None
    follow_up: str | None = None
    tokens: int | None = None
    cost_usd: float | None = None
    budget_request: int | None = None
    justification: str | None = None
    cwd: Path | None = None
    # laid over the agent's environment (the loop passes its policy file this way)
    env: Mapping[str, str] = field(default_factory=dict)
    # only these tool calls, by the harness's own allow-list (a room's second belt)
    allow: ToolAllowance | None = None
    # no sandbox for this run (the person's ``--no-sandbox``)
    no_sandbox: bool = False
    # folders the agent may write besides its work folder (a room's folder, an outbox)
    writable: tuple[Path, ...] = ()
    # folders the agent may read where the sandbox would show nothing (a wiki under /tmp)
    readable: tuple[Path, ...] = ()


# Set: every run this process supervises ends as cancelled, and new ones at once.
_CANCEL_ALL = threading.Event()


def cancel_all_runs() -> None:
    """End every run of this process as cancelled (a fleet worker that lost its lease)."""
    _CANCEL_ALL.set()


def allow_runs() -> None:
    """Runs of this process may go on again (``cancel_all_runs`` undone)."""
    _CANCEL_ALL.clear()


class _Cancel:
    """SIGINT/SIGTERM/SIGHUP to the supervisor become an orderly cancel of the agent."""

    def __init__(self) -> None:
        self.requested = False

    def __call__(self) -> bool:
        return self.requested or _CANCEL_ALL.is_set()

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        def handler(signum: int, frame: FrameType | None) -> None:
            self.requested = True

        # SIGHUP too: a closed terminal ends the run in order, with its report
        old = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
        try:
            for s in old:
                signal.signal(s, handler)
        except ValueError:  # not the main thread: the caller handles signals
            old = {}
        try:
            yield
        finally:
            for s, h in old.items():
                signal.signal(s, h)


def choose_run_budget(config: Config, request: RunRequest) -> tuple[Profile, Budget]:
    """The profile and the budget ``request`` runs on; a ``BudgetError`` if it may not run."""
    profile = choose_profile(config, request.profile, request.justification)
    harness = get_harness(profile.harness)
    budget = choose_budget(
        config,
        profile,
        iterations=request.iterations,
        tool_calls=request.tool_calls,
        timeout=request.timeout,
        budget_request=request.budget_request,
        justification=request.justification,
        tokens=request.tokens,
        cost_usd=request.cost_usd,
        reports_cost=bool(getattr(harness, "reports_cost", False)),
        reports_tokens=bool(getattr(harness, "reports_tokens", True)),
    )
    return profile, budget


def _preflight(
    harness: Harness, env: Mapping[str, str], cwd: Path, profile: Profile, budget: Budget
) -> None:
    """Refuse a configuration the harness cannot run (a model it does not know, a cost
    limit on a model without prices) before the agent starts; a harness that is not
    installed is left to the start, which says so."""
    preflight = getattr(harness, "preflight", None)
    if not callable(preflight):
        return
    if shutil.which(harness.executable, path=env.get("PATH", os.defpath)) is None:
        return
    preflight(env, cwd, tuple(profile.args), profile.model, budget.cost_usd)


def supervise(
    request: RunRequest, config: Config | None = None, env: Mapping[str, str] | None = None
) -> RunOutcome:
    base_env = {**(os.environ if env is None else env), **request.env}
    sandboxing.refuse_nested(base_env)
    config = config or load_config(env=base_env, cwd=request.cwd)
    unsandboxed = sandboxing.off_reason(config, request.no_sandbox)
    if unsandboxed is None:
        sandboxing.require_backend()
    profile, budget = choose_run_budget(config, request)
    harness = get_harness(profile.harness)
    cwd = (request.cwd or Path.cwd()).resolve()
    _preflight(harness, {**base_env, **profile.env}, cwd, profile, budget)
    priced = getattr(harness, "priced", None)
    if budget.cost_usd is not None and callable(priced):
        # A harness that derives its cost from configured prices (Vibe) resolves
        # them now, from the agent's own environment, or refuses the run.
        harness = priced({**base_env, **profile.env}, cwd, tuple(profile.args), profile.model)
    conn = state_db.connect(config.home)
    try:
        recover_abandoned(conn, config.home)
        previous = None
        if request.follow_up:
            previous = get_run(conn, request.follow_up)
            prev_report = RunPaths(Path(previous.run_dir)).report_md
            if not prev_report.exists():
                raise UsageError(
                    f"run {previous.id} has no progress report (status {previous.status}); "
                    f"a follow-up continues a run that a limit stopped."
                )
            prompt = compose_prompt(request.prompt, previous.id, prev_report.read_text("utf-8"))
        else:
            prompt = request.prompt
        return _execute(
            conn,
            config,
            profile,
            budget,
            harness,
            request,
            prompt,
            cwd,
            base_env,
            follow_up_of=previous.id if previous else None,
            unsandboxed=unsandboxed,
        )
    finally:
        conn.close()


def _execute(
    conn: Any,
    config: Config,
    profile: Profile,
    budget: Budget,
    harness: Harness,
    request: RunRequest,
    prompt: str,
    cwd: Path,
    base_env: Mapping[str, str],
    follow_up_of: str | None,
    unsandboxed: str | None = None,
) -> RunOutcome:
    started = datetime.now(UTC)
    run_id = new_run_id(started)
    session_id = str(uuid.uuid4())
    paths = RunPaths.for_run(config.home, run_id)
    paths.root.mkdir(parents=True, exist_ok=True)
    paths.outbox.mkdir()  # the agent's one writable place for proposals (TETHER_OUTBOX_DIR)
    atomic_write_text(paths.prompt, prompt)
    adapter = bind(harness, RunSpec(prompt=prompt, extra_args=tuple(profile.args)))
    hooks = write_run_hooks(
        config, paths, session_id, budget, run_id, profile, adapter, env=base_env
    )
    # The harness's own turn cap is a second belt: one past the budget, so that
    # tether's stop comes first, unless the cap is exact (it then stops the agent
    # right after model call N by itself, before call N+1 is sent).
    exact_cap = bool(getattr(harness, "turn_cap_is_exact", False))
    # the harness's own defaults lie under everything else (harnesses.claude_code.agent_env)
    defaults: Mapping[str, str] = getattr(harness, "agent_env", {})
    env = agent_env(config, profile, run_id, session_id, {**defaults, **base_env})
    env[OUTBOX_ENV] = str(paths.outbox)
    prepared = None
    if unsandboxed is None:
        # the outbox is the agent's one writable place inside the tether home
        writable = (*request.writable, paths.outbox)
        world = sandboxing.World(config, profile, cwd, env, paths, writable, request.readable)
        prepared = sandboxing.prepare(world)
        if hooks.kind == "settings":
            sandboxing.turn_off_claude_sandbox(hooks.settings)
    spec = RunSpec(
        prompt=prompt,
        model=profile.model,
        extra_args=(*profile.args, *hooks.args, *(prepared.args if prepared else ())),
        session_id=session_id if harness.accepts_session_id else None,
        max_turns=(budget.iterations + (0 if exact_cap else 1)) if harness.has_turn_cap else None,
        time_limit_seconds=budget.timeout_seconds,
        settings_path=hooks.settings,
        max_cost_usd=budget.cost_usd,
        max_tokens=budget.tokens,
        cwd=cwd,
        allow=request.allow,
    )
    argv = harness.build_command(spec)
    before = worktree.snapshot(cwd, exclude=config.home)
    worktree.save(before, paths.worktree_start)  # a recovery compares with it
    row = RunRow(
        id=run_id,
        unit=request.unit,
        profile=profile.name,
        harness=profile.harness,
        model=profile.model,
        argv=argv,
        cwd=str(cwd),
        session_id=session_id,
        harness_session_id=None,
        status="running",
        stop_reason=None,
        exit_code=None,
        agent_exit_status=None,
        iteration_limit=budget.iterations,
        tool_call_limit=budget.tool_calls,
        timeout_seconds=budget.timeout_seconds,
        iterations=0,
        tool_calls=0,
        tool_results=0,
        open_tool_calls=0,
        usage={},
        started_at=started.isoformat(),
        ended_at=None,
        supervisor_pid=os.getpid(),
        supervisor_start_time=_own_start_time(),
        agent_pgid=None,
        follow_up_of=follow_up_of,
        budget_request=request.budget_request,
        justification=request.justification,
        run_dir=str(paths.root),
        host=hostname(),
        depth=int(env["TETHER_DEPTH"]),
        sandbox="bubblewrap" if prepared is not None else f"off: {unsandboxed}",
    )
    with state_db.transaction(conn):
        insert_run(conn, row)
    ledger = Ledger(iteration_source=adapter.iteration_source)
    cancel = _Cancel()
    timing: dict[str, float] = {}
    t0 = time.monotonic()
    with contextlib.ExitStack() as running:
        running.enter_context(cancel.installed())
        running.enter_context(gate_db_held_open(config.home))
        sandbox = _SandboxedRun(prepared, paths, session_id, env) if prepared else None
        if sandbox is not None:
            running.callback(sandbox.close_if_open)
        try:
            agent = spawn_agent(
                argv,
                env=env if sandbox is None else sandbox.env,
                cwd=cwd,
                harness=profile.harness,
                kill_grace=config.kill_grace_seconds,
                sandbox=sandbox,
            )
        except HarnessNotFoundError as exc:
            with state_db.transaction(conn):
                update_run(
                    conn,
                    run_id,
                    status="failed",
                    stop_reason=f"could not start: {exc}",
                    exit_code=int(exc.exit_code),
                    ended_at=datetime.now(UTC).isoformat(),
                )
            raise
        if sandbox is not None:
            sandbox.started()
        stderr = StderrSink(agent.stderr, paths.stderr, budget.stderr_max_bytes)
        try:
            with state_db.transaction(conn):
                update_run(conn, run_id, agent_pgid=agent.pgid)
            stop, how = watch_agent(
                agent,
                adapter,
                ledger,
                budget,
                paths,
                t0,
                env,
                cancel,
                conn,
                run_id,
                config.kill_grace_seconds,
                session_id if hooks.installed else None,
                timing,
                self_stopping=hooks.self_stopping,
                stderr_over=stderr.over.is_set,
            )
        finally:
            if agent.group_alive():
                mark_stopping(str(paths.root))
                agent.stop(config.kill_grace_seconds)
            stderr.finish()
            agent.close()
        seconds = time.monotonic() - t0
        status = agent.popen.returncode
        found = sandbox.finish(agent) if sandbox is not None else None
    if found is not None:
        status = found.status if found.status is not None else status
    findings = found.findings if found is not None else sandboxing.unsandboxed(str(unsandboxed))
    atomic_write_json(paths.root / "sandbox.json", findings)
    return finish_run(
        conn,
        Ending(
            config=config,
            profile=profile,
            budget=budget,
            unit=request.unit,
            run_id=run_id,
            paths=paths,
            ledger=ledger,
            stop=stop,
            how=how,
            agent_status=status,
            seconds=seconds,
            cwd=cwd,
            before=before,
            session_id=session_id,
            stop_latency=timing.get("stop_latency_seconds"),
            gated=hooks.installed,
            sandbox=findings,
        ),
    )


def _own_start_time() -> float | None:
    try:
        import psutil

        return float(psutil.Process().create_time())
    except Exception:
        return None
