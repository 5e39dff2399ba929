"""``tether run``: one agent session working on one unit, on a hard budget.

``supervise`` plans a run (profile, budget, harness, prompt: ``RunPlan``) and
hands it to ``SupervisedRun``, whose steps lay out the run's folder, prepare
the gate's hooks, the environment and the sandbox, record the start, run and
watch the agent, and finish with the report and the record. Wiring only:
choosing (profiles), spawning (process), counting (live, watching), writing
down (record, outcome) each live in their own module.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tether.config import Config, Profile, load_config
from tether.core.errors import HarnessNotFoundError, UsageError
from tether.core.process_tree import has_proc, start_time
from tether.core.session_stamp import hostname
from tether.events.accounting import Ledger
from tether.fs import atomic_write_json, atomic_write_text
from tether.gate.runstop import mark_stopping
from tether.harnesses import get_harness
from tether.harnesses.base import Harness, RunSpec, bind
from tether.outbox.folder import OUTBOX_ENV
from tether.runs import sandboxing, worktree
from tether.runs.agent_env import agent_env
from tether.runs.budget import Budget
from tether.runs.cancel import Cancel, allow_runs, cancel_all_runs
from tether.runs.followup_prompt import compose_prompt
from tether.runs.gate_setup import RunHooks, gate_db_held_open, register_budget, write_run_hooks
from tether.runs.outcome import Ending, RunOutcome, finish_run
from tether.runs.process import AgentProcess, spawn_agent
from tether.runs.record import RunPaths, new_run_id
from tether.runs.recovery import recover_abandoned
from tether.runs.request import RunRequest, choose_run_budget
from tether.runs.sandboxed_run import SandboxedRun as _SandboxedRun
from tether.runs.stderr_sink import StderrSink
from tether.runs.watching import Watch, Watched, watch_agent
from tether.store import state_db
from tether.store.runs import RunRow, get_run, insert_run, update_run

__all__ = [
    "RunPlan",
    "RunRequest",
    "SupervisedRun",
    "allow_runs",  # runs.cancel's, offered here too: the fleet ends its runs through them
    "cancel_all_runs",
    "choose_run_budget",
    "supervise",
]


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


@dataclass(frozen=True)
class RunPlan:
    """What one run is to be, decided before anything of it is written."""

    config: Config
    profile: Profile
    budget: Budget
    harness: Harness  # priced already, where the harness derives its cost from prices
    request: RunRequest
    prompt: str  # the request's, or a follow-up's with the report it continues
    cwd: Path
    base_env: Mapping[str, str]  # the caller's environment with the request's over it
    follow_up_of: str | None
    unsandboxed: str | None  # why the run has no sandbox; None: it has one


def supervise(
    request: RunRequest, config: Config | None = None, env: Mapping[str, str] | None = None
) -> RunOutcome:
    """Run ``request`` on its budget to its end, and say how it ended."""
    base_env = {**(os.environ if env is None else env), **request.env}
    sandboxing.refuse_nested(base_env)
    config = config or load_config(env=base_env, cwd=request.cwd)
    unsandboxed = sandboxing.off_reason(config, request.no_sandbox)
    if unsandboxed is None:
        sandboxing.require_backend()
    profile, budget = choose_run_budget(config, request)
    cwd = (request.cwd or Path.cwd()).resolve()
    harness = _ready_harness(profile, budget, {**base_env, **profile.env}, cwd)
    conn = state_db.connect(config.home)
    try:
        recover_abandoned(conn, config.home)
        prompt, follow_up_of = _prompt(conn, request)
        plan = RunPlan(
            config=config,
            profile=profile,
            budget=budget,
            harness=harness,
            request=request,
            prompt=prompt,
            cwd=cwd,
            base_env=base_env,
            follow_up_of=follow_up_of,
            unsandboxed=unsandboxed,
        )
        return SupervisedRun(conn, plan).execute()
    finally:
        conn.close()


def _ready_harness(profile: Profile, budget: Budget, env: Mapping[str, str], cwd: Path) -> Harness:
    """The profile's harness, checked against the run's configuration and priced."""
    harness = get_harness(profile.harness)
    _preflight(harness, env, cwd, profile, budget)
    priced = getattr(harness, "priced", None)
    if budget.cost_usd is not None and callable(priced):
        # A harness that derives its cost from configured prices (Vibe) resolves
        # them now, from the agent's own environment, or refuses the run.
        harness = priced(env, cwd, tuple(profile.args), profile.model)
    return harness


def _prompt(conn: Any, request: RunRequest) -> tuple[str, str | None]:
    """The prompt the agent gets and the run it follows up, if any."""
    if not request.follow_up:
        return request.prompt, None
    previous = get_run(conn, request.follow_up)
    prev_report = RunPaths(Path(previous.run_dir)).report_md
    if not prev_report.exists():
        raise UsageError(
            f"run {previous.id} has no progress report (status {previous.status}); "
            f"a follow-up continues a run that a limit stopped."
        )
    return compose_prompt(request.prompt, previous.id, prev_report.read_text("utf-8")), previous.id


@dataclass(frozen=True)
class _Ready:
    """What the agent starts with: its command line and environment, the reader of its
    stream, the gate's hooks and its sandbox."""

    argv: list[str]
    env: dict[str, str]
    adapter: Harness  # the harness bound to the run's prompt: it reads the stream
    hooks: RunHooks
    prepared: sandboxing.Prepared | None  # the run's sandbox; None: unsandboxed


@dataclass(frozen=True)
class _AgentEnd:
    """What running the agent left: its counts, how it ended, what its sandbox saw."""

    ledger: Ledger
    watched: Watched
    status: int | None  # the agent's exit status (inside the sandbox, when it had one)
    seconds: float
    findings: sandboxing.Findings


class SupervisedRun:
    """One run from its folder to its record, in the order its steps happen."""

    def __init__(self, conn: Any, plan: RunPlan) -> None:
        self.conn = conn
        self.plan = plan
        self.started = datetime.now(UTC)
        self.run_id = new_run_id(self.started)
        self.session_id = str(uuid.uuid4())
        self.paths = RunPaths.for_run(plan.config.home, self.run_id)

    def execute(self) -> RunOutcome:
        self._lay_out_folder()
        ready = self._prepare()
        before = worktree.snapshot(self.plan.cwd, exclude=self.plan.config.home)
        worktree.save(before, self.paths.worktree_start)  # a recovery compares with it
        self._record_start(ready)
        ended = self._run_agent(ready)
        return self._finish(ended, before, ready.hooks)

    def _lay_out_folder(self) -> None:
        paths = self.paths
        paths.root.mkdir(parents=True, exist_ok=True)
        paths.outbox.mkdir()  # the agent's one writable place for proposals (TETHER_OUTBOX_DIR)
        atomic_write_text(paths.prompt, self.plan.prompt)

    def _prepare(self) -> _Ready:
        """The gate's hooks, the agent's environment, its sandbox and its command line."""
        plan = self.plan
        adapter = bind(
            plan.harness, RunSpec(prompt=plan.prompt, extra_args=tuple(plan.profile.args))
        )
        register_budget(plan.config, self.session_id, plan.budget, self.run_id)
        hooks = write_run_hooks(self.paths, plan.profile, adapter, plan.base_env)
        env = self._agent_env()
        prepared = None
        if plan.unsandboxed is None:
            prepared = self._prepare_sandbox(env, hooks)
        return _Ready(self._command(hooks, prepared), env, adapter, hooks, prepared)

    def _agent_env(self) -> dict[str, str]:
        plan = self.plan
        # the harness's own defaults lie under everything else (harnesses.claude_code.agent_env)
        defaults: Mapping[str, str] = getattr(plan.harness, "agent_env", {})
        env = agent_env(
            plan.config, plan.profile, self.run_id, self.session_id, {**defaults, **plan.base_env}
        )
        env[OUTBOX_ENV] = str(self.paths.outbox)
        return env

    def _prepare_sandbox(self, env: dict[str, str], hooks: RunHooks) -> sandboxing.Prepared:
        plan = self.plan
        # the outbox is the agent's one writable place inside the tether home
        writable = (*plan.request.writable, self.paths.outbox)
        world = sandboxing.World(
            plan.config, plan.profile, plan.cwd, env, self.paths, writable, plan.request.readable
        )
        prepared = sandboxing.prepare(world)
        if hooks.kind == "settings":
            sandboxing.turn_off_claude_sandbox(hooks.settings)
        return prepared

    def _command(self, hooks: RunHooks, prepared: sandboxing.Prepared | None) -> list[str]:
        plan, harness, budget = self.plan, self.plan.harness, self.plan.budget
        # The harness's own turn cap is a second belt: one past the budget, so that
        # tether's stop comes first, unless the cap is exact (it then stops the agent
        # right after model call N by itself, before call N+1 is sent).
        exact_cap = bool(getattr(harness, "turn_cap_is_exact", False))
        spec = RunSpec(
            prompt=plan.prompt,
            model=plan.profile.model,
            extra_args=(*plan.profile.args, *hooks.args, *(prepared.args if prepared else ())),
            session_id=self.session_id if harness.accepts_session_id else None,
            max_turns=(budget.iterations + (0 if exact_cap else 1))
            if harness.has_turn_cap
            else None,
            time_limit_seconds=budget.timeout_seconds,
            settings_path=hooks.settings,
            max_cost_usd=budget.cost_usd,
            max_tokens=budget.tokens,
            cwd=plan.cwd,
            allow=plan.request.allow,
        )
        return harness.build_command(spec)

    def _record_start(self, ready: _Ready) -> None:
        plan, budget, request = self.plan, self.plan.budget, self.plan.request
        row = RunRow(
            id=self.run_id,
            unit=request.unit,
            profile=plan.profile.name,
            harness=plan.profile.harness,
            model=plan.profile.model,
            argv=ready.argv,
            cwd=str(plan.cwd),
            session_id=self.session_id,
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
            started_at=self.started.isoformat(),
            ended_at=None,
            supervisor_pid=os.getpid(),
            supervisor_start_time=_own_start_time(),
            agent_pgid=None,
            follow_up_of=plan.follow_up_of,
            budget_request=request.budget_request,
            justification=request.justification,
            run_dir=str(self.paths.root),
            host=hostname(),
            depth=int(ready.env["TETHER_DEPTH"]),
            sandbox="bubblewrap" if ready.prepared is not None else f"off: {plan.unsandboxed}",
        )
        with state_db.transaction(self.conn):
            insert_run(self.conn, row)

    def _update(self, **columns: Any) -> None:
        with state_db.transaction(self.conn):
            update_run(self.conn, self.run_id, **columns)

    def _run_agent(self, ready: _Ready) -> _AgentEnd:
        """Start the agent (in its sandbox), watch it to its end, close what served it."""
        ledger = Ledger(iteration_source=ready.adapter.iteration_source)
        cancel = Cancel()
        t0 = time.monotonic()
        with contextlib.ExitStack() as running:
            running.enter_context(cancel.installed())
            running.enter_context(gate_db_held_open(self.plan.config.home))
            sandbox = None
            if ready.prepared is not None:
                sandbox = _SandboxedRun(ready.prepared, self.paths, self.session_id, ready.env)
                running.callback(sandbox.close_if_open)
            agent = self._spawn(ready, sandbox)
            if sandbox is not None:
                sandbox.started()
            watched = self._watch(agent, ledger, ready, cancel, t0)
            seconds = time.monotonic() - t0
            status = agent.popen.returncode
            found = sandbox.finish(agent) if sandbox is not None else None
        if found is not None:
            status = found.status if found.status is not None else status
        findings = found.findings if found is not None else self._unsandboxed()
        atomic_write_json(self.paths.root / "sandbox.json", findings.as_dict())
        return _AgentEnd(ledger, watched, status, seconds, findings)

    def _unsandboxed(self) -> sandboxing.Findings:
        return sandboxing.unsandboxed(str(self.plan.unsandboxed))

    def _spawn(self, ready: _Ready, sandbox: _SandboxedRun | None) -> AgentProcess:
        try:
            return spawn_agent(
                ready.argv,
                env=ready.env if sandbox is None else sandbox.env,
                cwd=self.plan.cwd,
                harness=self.plan.profile.harness,
                kill_grace=self.plan.config.kill_grace_seconds,
                sandbox=sandbox,
            )
        except HarnessNotFoundError as exc:
            self._update(
                status="failed",
                stop_reason=f"could not start: {exc}",
                exit_code=int(exc.exit_code),
                ended_at=datetime.now(UTC).isoformat(),
            )
            raise

    def _watch(
        self, agent: AgentProcess, ledger: Ledger, ready: _Ready, cancel: Cancel, t0: float
    ) -> Watched:
        """Watch the agent to its end; whatever happens, nothing of it outlives this."""
        grace = self.plan.config.kill_grace_seconds
        stderr = StderrSink(agent.stderr, self.paths.stderr, self.plan.budget.stderr_max_bytes)
        try:
            self._update(agent_pgid=agent.pgid)
            watch = Watch(
                adapter=ready.adapter,
                budget=self.plan.budget,
                paths=self.paths,
                env=ready.env,
                grace=grace,
                hooked_session=self.session_id if ready.hooks.installed else None,
                self_stopping=ready.hooks.self_stopping,
                cancelled=cancel,
                on_progress=self._progress,
                stderr_over=stderr.over.is_set,
            )
            return watch_agent(agent, ledger, watch, t0)
        finally:
            if agent.group_alive():
                mark_stopping(str(self.paths.root))
                agent.stop(grace)
            stderr.finish()
            agent.close()

    def _progress(self, ledger: Ledger) -> None:
        self._update(
            iterations=ledger.iterations,
            tool_calls=ledger.tool_calls,
            tool_results=ledger.tool_results,
            harness_session_id=ledger.session_id,
        )

    def _finish(self, ended: _AgentEnd, before: worktree.Snapshot, hooks: RunHooks) -> RunOutcome:
        """The report or the post-run stages, then the record (runs.outcome)."""
        plan = self.plan
        return finish_run(
            self.conn,
            Ending(
                config=plan.config,
                profile=plan.profile,
                budget=plan.budget,
                unit=plan.request.unit,
                run_id=self.run_id,
                paths=self.paths,
                ledger=ended.ledger,
                stop=ended.watched.stop,
                how=ended.watched.how,
                agent_status=ended.status,
                seconds=ended.seconds,
                cwd=plan.cwd,
                before=before,
                session_id=self.session_id,
                stop_latency=ended.watched.stop_latency,
                gated=hooks.installed,
                sandbox=ended.findings,
            ),
        )


def _own_start_time() -> float | None:
    """What ``liveness`` compares: read from ``/proc`` where there is one, as it reads it
    (without psutil, which no other step of a run needs)."""
    if has_proc():
        return start_time(os.getpid())
    try:
        import psutil

        return float(psutil.Process().create_time())
    except Exception:
        return None
