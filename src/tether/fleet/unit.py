"""One unit of a fleet project: a fresh clone at the project's head, one tick, one push.

The tick is the same code as ``tether loop tick`` (level 1, level 2, guard,
signal line), run in a fresh clone with the project's own tether home (its run
store, guard and reports) under the fleet's state folder. What the unit changed
— the agent's work and the board — is committed as one commit and pushed to
the project's branch. A push that is rejected because someone else moved the
branch is rebased; a rebase that conflicts is never forced: the project stops
with the reason, for a person to resolve.

A unit may run twice (a worker died in the middle: DBOS runs the step again).
The second attempt first ends what the first left: its run is recovered as
``abandoned`` with a report from its events, and the tick then follows it up
exactly as a limit stop, in a new clone, so nothing half-done is pushed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from tether.exit_codes import ExitCode

GIT_TIMEOUT = 120.0
AUTHOR = ("tether fleet", "tether-fleet@localhost")


@dataclass(frozen=True)
class UnitSpec:
    project: str
    repo: str
    branch: str
    seq: int
    worker: str
    state_home: Path  # the project's tether home: runs, guard, reports
    workdir: Path  # where this worker makes its clones


@dataclass
class UnitOutcome:
    line: str
    exit_code: int
    stop: bool
    run_ids: list[str] = field(default_factory=list)
    recovered: list[str] = field(default_factory=list)  # runs a dead worker left, now abandoned
    pushed: str | None = None  # the commit pushed, if the unit changed anything
    conflict: str | None = None  # why the project must stop for a person

    def as_dict(self) -> dict[str, object]:
        return {
            "line": self.line,
            "exit_code": self.exit_code,
            "stop": self.stop,
            "run_ids": self.run_ids,
            "recovered": self.recovered,
            "pushed": self.pushed,
            "conflict": self.conflict,
        }


class GitError(Exception):
    pass


def git(cwd: Path, *args: str, env: Mapping[str, str] | None = None) -> str:
    done = subprocess.run(
        ["git", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=GIT_TIMEOUT,
        check=False,
        env=None if env is None else dict(env),
    )
    if done.returncode != 0:
        message = (done.stderr or done.stdout).strip().splitlines()
        raise GitError(f"git {args[0]}: {message[-1] if message else 'failed'}")
    return done.stdout.strip()


def _git_env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        GIT_AUTHOR_NAME=AUTHOR[0],
        GIT_AUTHOR_EMAIL=AUTHOR[1],
        GIT_COMMITTER_NAME=AUTHOR[0],
        GIT_COMMITTER_EMAIL=AUTHOR[1],
        GIT_TERMINAL_PROMPT="0",
    )
    return env


def clone(spec: UnitSpec) -> Path:
    """A fresh clone of the project's branch at its current head, in a folder of its own.

    A new folder per attempt: a folder an earlier attempt left (its worker
    died) stays as it was until the tick's recovery has ended that attempt's
    agent and written its report, which shows the work left there.
    """
    target = spec.workdir / spec.project / f"{spec.seq}-{spec.worker}-{uuid.uuid4().hex[:8]}"
    target.parent.mkdir(parents=True, exist_ok=True)
    git(
        target.parent,
        "clone",
        "--quiet",
        "--single-branch",
        "--branch",
        spec.branch,
        spec.repo,
        target.name,
        env=_git_env(),
    )
    return target


def _remove_leftovers(spec: UnitSpec, keep: Path) -> None:
    """Clones of this project that earlier, dead attempts left (recovered by now)."""
    for folder in (spec.workdir / spec.project).iterdir():
        if folder != keep and folder.is_dir():
            shutil.rmtree(folder, ignore_errors=True)


def run_unit(spec: UnitSpec) -> UnitOutcome:
    """Tick once in a fresh clone (which first recovers what a dead worker left), push."""
    from tether.loop.context import open_loop
    from tether.loop.tick import tick

    spec.state_home.mkdir(parents=True, exist_ok=True)
    checkout = clone(spec)
    try:
        env = dict(os.environ)
        env["TETHER_HOME"] = str(spec.state_home)
        env.pop("TETHER_SESSION_ID", None)
        env.pop("TETHER_RUN_ID", None)
        loop = open_loop(checkout, env=env)
        try:
            result = tick(loop)
        finally:
            loop.close()
            loop.lock_path.unlink(missing_ok=True)  # one per clone folder: not kept
        _remove_leftovers(spec, keep=checkout)
        outcome = UnitOutcome(
            line=result.line,
            exit_code=int(result.exit_code),
            stop=result.signal.is_stop,
            run_ids=[result.dispatched.run_id]
            if result.dispatched is not None and result.dispatched.run_id
            else [],
            recovered=result.recovered,
        )
        message = f"tether fleet: {spec.project} unit {spec.seq} ({spec.worker})\n\n{result.line}\n"
        try:
            outcome.pushed = commit_and_push(checkout, spec.branch, message)
        except PushConflictError as exc:
            outcome.conflict = str(exc)
        return outcome
    finally:
        shutil.rmtree(checkout, ignore_errors=True)


class PushConflictError(Exception):
    """The branch moved and the unit's commit does not rebase cleanly onto it."""


def commit_and_push(checkout: Path, branch: str, message: str, attempts: int = 5) -> str | None:
    """Commit everything the unit changed and push it; rebase when the branch moved."""
    env = _git_env()
    git(checkout, "add", "--all", env=env)
    if not git(checkout, "status", "--porcelain", env=env):
        return None
    git(checkout, "commit", "--quiet", "--no-verify", "-m", message, env=env)
    for _ in range(attempts):
        try:
            git(checkout, "push", "--quiet", "origin", f"HEAD:refs/heads/{branch}", env=env)
            return git(checkout, "rev-parse", "HEAD", env=env)
        except GitError as rejected:
            git(checkout, "fetch", "--quiet", "origin", branch, env=env)
            try:
                git(checkout, "rebase", "--quiet", "FETCH_HEAD", env=env)
            except GitError:
                subprocess.run(
                    ["git", "rebase", "--abort"], cwd=checkout, capture_output=True, check=False
                )
                raise PushConflictError(
                    f"the push to {branch} was rejected ({rejected}) and the unit's commit "
                    f"does not rebase onto the new head: someone changed the same files; "
                    f"resolve it in the repository, then `tether fleet resume`"
                ) from None
    raise PushConflictError(f"the push to {branch} was rejected {attempts} times in a row")


def conflict_exit() -> int:
    return int(ExitCode.HUMAN_STOP)
