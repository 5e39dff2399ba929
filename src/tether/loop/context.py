"""Everything a tick needs, in one place: configuration, board, store, clock, sources.

Tests build a ``Loop`` with a ``FakeClock`` and their own sources or
dispatcher; the CLI builds it from the configuration of the working folder.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from tether.board import Board
from tether.clock import Clock, SystemClock
from tether.config import Config, Profile, load_config
from tether.config.loop import LoopSettings, parse_duration
from tether.core.errors import ConfigError, TetherError
from tether.core.exit_codes import ExitCode
from tether.fs import lock_file
from tether.loop.autonomy import Policy, Verdict, holding
from tether.loop.project_board import board_of as board_of  # its home; imported from here too
from tether.loop.source_setup import build_sources
from tether.loop.sources import Source
from tether.store import state_db

if TYPE_CHECKING:
    from tether.runs.outcome import RunOutcome
    from tether.runs.request import RunRequest

Dispatcher = Callable[["RunRequest"], "RunOutcome"]


class LoopError(TetherError):
    """The loop cannot go on and cannot honestly stop either; a person must act.

    Exit 41 (a stop for the human), never a signal line: an INBOX entry tether
    cannot triage keeps every STOP from being claimed, and only a person can fix it.
    """

    exit_code = ExitCode.HUMAN_STOP


class LoopBusyError(LoopError):
    """Another tether loop works this board: refused (exit 30), like a second room."""

    exit_code = ExitCode.GATE_REFUSED


@dataclass
class Loop:
    config: Config
    settings: LoopSettings
    project_root: Path
    board: Board
    conn: sqlite3.Connection
    clock: Clock
    env: Mapping[str, str]
    sources: Sequence[Source]
    dispatcher: Dispatcher
    profile: str | None = None
    justification: str | None = None
    # runs go to the built-in scripted profile although nobody chose it: they only
    # demonstrate, and their outcome is not recorded as done
    demonstration: bool = False
    # refuse (exit 3) a tick that would start an agent while ``demonstration`` holds:
    # what the command line asks for; a program driving the library may demonstrate
    refuse_demonstration: bool = False
    # the runs start inside the sandbox: the policy's approval rules are then advice.
    # None: asked when a rule first matches (it probes bubblewrap: not on every hook)
    sandboxed_runs: bool | None = None
    # seconds, parsed once
    guard_interval: float = field(init=False)
    check_timeout: float = field(init=False)
    check_interval: float = field(init=False)
    policy: Policy = field(init=False)  # what counts as autonomous
    # the tick under way (``tick-YYYYMMDDTHHMMSS-xxxxxx``): the session a note names when
    # the loop runs in no agent session of its own
    tick_id: str | None = None
    _held: int = field(default=0, init=False, repr=False)

    def __post_init__(self) -> None:
        self.guard_interval = parse_duration(self.settings.guard_interval)
        self.check_timeout = parse_duration(self.settings.check_timeout)
        self.check_interval = parse_duration(self.settings.check_interval)
        self.profile = self.profile or self.settings.profile
        self.policy = Policy.from_config(self.config)
        self.board.stamp = self.session_line  # every note the loop writes ends with it

    def session_line(self) -> str:
        """The closing line of notes the loop writes (the session stamp): never guessed.

        The session is the one of the environment (an agent's, ``TETHER_SESSION_ID``)
        when there is one, else the loop's own tick: the tick is the session that
        wrote the note, and its id is in the board's tick history.
        """
        from tether.core.session_stamp import stamp, stamp_session

        explicit = stamp_session(self.env) or self.tick_id
        return stamp(
            self.env, "tether-loop", explicit=explicit, day=self.clock.now().date().isoformat()
        )

    def begin_tick(self) -> str:
        """A new tick id for the tick that starts now (its notes' session)."""
        moment = self.clock.now().strftime("%Y%m%dT%H%M%S")
        # os.urandom(n).hex() is what secrets.token_hex(n) returns, without loading
        # secrets (random, base64, hmac) in every tick
        self.tick_id = f"tick-{moment}-{os.urandom(3).hex()}"
        return self.tick_id

    def require_profile(self) -> None:
        """Refuse a unit that needs an agent when none is configured (``ConfigError``, exit 3).

        Called when a tick (real or dry) would start a run, and only then: a tick
        that triages, checks or stops needs no agent. With ``refuse_demonstration``
        the built-in scripted agent would only demonstrate: nothing gets done and
        every tick says CONTINUE again, so ``while tether loop tick`` would spin.
        ``tether demo`` writes its own profile and is not affected.
        """
        if self.demonstration and self.refuse_demonstration:
            raise ConfigError(
                "no agent profile is configured, so a tick cannot dispatch work; add "
                '[profiles.NAME] with harness = "claude-code" (or "codex", ...) and '
                "default = true to tether.toml, or pass --profile NAME",
                key="profiles",
            )

    @property
    def scope(self) -> str:
        """The key of this board's records in the store."""
        return str(self.board.root)

    @property
    def sandboxed(self) -> bool:
        """Whether this loop's runs start inside the sandbox (asked once)."""
        if self.sandboxed_runs is None:
            from tether.runs.sandboxing import runs_are_sandboxed

            self.sandboxed_runs = runs_are_sandboxed(self.config)
        return self.sandboxed_runs

    def holding(self, verdict: Verdict | None) -> Verdict | None:
        """The policy's verdict that keeps a unit from running here, if any."""
        return None if verdict is None else holding(verdict, self.sandboxed)

    def close(self) -> None:
        self.conn.close()

    @property
    def lock_path(self) -> Path:
        """The file of this board's loop lock, in the tether home."""
        name = hashlib.sha256(self.scope.encode()).hexdigest()[:12]
        return self.config.home / f"loop-{name}.lock"

    @contextlib.contextmanager
    def exclusive(self) -> Iterator[None]:
        """Hold this board's loop lock: one loop working a board at a time (re-entrant).

        A second ``tether loop tick`` or ``run`` on the same board fails at once
        instead of dispatching a second unit next to the first.
        """
        if self._held:
            self._held += 1
            try:
                yield
            finally:
                self._held -= 1
            return
        path = self.lock_path
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            if not lock_file(fd, wait=False):
                holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
                raise LoopBusyError(
                    f"another tether loop is working on {self.scope} (pid {holder}); "
                    f"wait for it, or use --dry-run to look without dispatching."
                )
            os.ftruncate(fd, 0)
            os.pwrite(fd, str(os.getpid()).encode(), 0)
            self._held = 1
            try:
                yield
            finally:
                self._held = 0
        finally:
            os.close(fd)


@dataclass(frozen=True)
class ProfileChoice:
    """The profile a person chose for the loop's runs (``--profile``), and why
    (``--justification``: needed for a profile stronger than the default)."""

    profile: str | None = None
    justification: str | None = None


def open_loop(
    cwd: Path | None = None,
    *,
    env: Mapping[str, str] | None = None,
    clock: Clock | None = None,
    sources: Sequence[Source] | None = None,
    dispatcher: Dispatcher | None = None,
    chosen: ProfileChoice | None = None,
) -> Loop:
    """The loop of the project that ``cwd`` belongs to (its ``tether.toml``)."""
    environ = dict(os.environ if env is None else env)
    config = load_config(env=environ, cwd=cwd)
    settings = config.section("loop", LoopSettings)
    root = config.project_root
    clock = clock or SystemClock()
    board = board_of(config, clock=clock)
    if sources is None:
        sources = build_sources(settings, root, environ)
    if dispatcher is None:
        dispatcher = _supervisor(config, environ)
    chosen = chosen or ProfileChoice()
    profile = chosen.profile or settings.profile
    runs_with = _check_choices(config, settings, profile, chosen.justification)
    conn = state_db.connect(config.home)
    return Loop(
        config=config,
        settings=settings,
        project_root=root,
        board=board,
        conn=conn,
        clock=clock,
        env=environ,
        sources=sources,
        dispatcher=dispatcher,
        profile=chosen.profile,
        justification=chosen.justification,
        demonstration=runs_with.builtin and profile is None,
    )


def _check_choices(
    config: Config, settings: LoopSettings, profile: str | None, justification: str | None
) -> Profile:
    """The profile of dispatched runs; one every run would refuse fails now, before any tick."""
    from tether.runs.profiles import choose_profile

    chosen = choose_profile(config, profile, justification)
    if settings.follow_up_iterations is not None:
        # imported here: the budgets load the event counting, which a tick without a
        # run to start never needs
        from tether.runs.budget import validate_iterations

        validate_iterations(
            settings.follow_up_iterations,
            config.max_iterations_cap,
            what="loop.follow_up_iterations",
        )
    return chosen


def _supervisor(config: Config, env: Mapping[str, str]) -> Dispatcher:
    def run(request: RunRequest) -> RunOutcome:
        from tether.runs.supervisor import supervise

        return supervise(request, config=config, env=env)

    return run
