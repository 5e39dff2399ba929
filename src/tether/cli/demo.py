"""``tether demo``: the evidence-based loop on a small example board, offline, in seconds."""

from __future__ import annotations

import shlex
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import click

from tether.loop.signal import Signal

if TYPE_CHECKING:
    from tether.loop.example import Example
    from tether.loop.runner import RunResult


def _say(text: str = "") -> None:
    click.echo(text)


def _cmd(text: str) -> None:
    click.echo(click.style(f"$ {text}", bold=True))


@click.command()
@click.option(
    "--dir",
    "folder",
    type=click.Path(file_okay=False, path_type=Path),
    help="Build the example here (default: a new temporary folder).",
)
def demo(folder: Path | None) -> None:
    """Run the loop on an example board with the scripted agent (no agent CLI, no network).

    Shows triage, a run, a limit stop with its report, the follow-up that gets
    the report, a BLOCKED ticket whose check passes, the final STOP (blind),
    then what changes when the missing source becomes available.
    """
    from tether.loop.example import build
    from tether.sandbox.backend import backend_for_this_machine

    root = (folder or Path(tempfile.mkdtemp(prefix="tether-demo-"))).absolute()
    if folder is not None and folder.exists() and any(folder.iterdir()):
        raise click.UsageError(f"--dir {folder} is not empty; give a new or empty folder.")
    no_sandbox = backend_for_this_machine().unavailable()
    example = build(root, unsandboxed=no_sandbox is not None)
    _introduce(root, example, sandboxed=no_sandbox is None)
    signals: list[Signal] = []
    outcome = _first_run(root, example, signals)
    _source_arrives(root, example, signals)
    approved = _user_answers(root, example, signals)
    if no_sandbox is None:
        _escape(root, example.env(with_later=True))
    _say()
    _say(f"The example stays in {root}: cd there and try `tether loop tick --json`,")
    _say("`tether board list`, or add a note to tickets/INBOX/ and run `tether loop run`.")
    # The story is only true if each act stopped the way it narrates; else the demo fails.
    expected = [Signal.BLIND, Signal.USER_ONLY, Signal.EXHAUSTED, Signal.GUARD_EXHAUSTED]
    ok = signals == expected and approved and not outcome.interrupted
    sys.exit(0 if ok else 1)


def _introduce(root: Path, example: Example, *, sandboxed: bool) -> None:
    """Act 0: where the example lives, whether runs are sandboxed, and the board it starts with."""
    _say(f"tether demo: an example project in {root}")
    _say("(the agent is tether's scripted harness: a real process that fakes only the model)")
    if not sandboxed:
        _say(
            "(its runs are unsandboxed: no sandbox can start here; to sandbox every run, "
            "install bubblewrap: apt install bubblewrap)"
        )
    else:
        _say("(every run's agent is sandboxed: it can touch its work folder and nothing else)")
    _say()
    _say("The board:")
    _say(f"  INBOX       {example.note.name}: an informal note, not yet a ticket")
    _say(
        f'  ACTIONABLE  {example.parser.id} (P1) "{example.parser.title}": budget 3 '
        f"iterations, the work takes 5"
    )
    _say(f'  ACTIONABLE  {example.typo.id} (P2) "{example.typo.title}"')
    _say(
        f'  BLOCKED     {example.release.id} "{example.release.title}": check '
        f"`test -f build/ready.txt` (the file is there now); publishing the wheel is "
        f"a step outside the project, so its run can only propose it"
    )
    _say(
        f'  WAITING     {example.review.id} "{example.review.title}": until '
        f"{example.review.front['until']} (tomorrow)"
    )
    _say(f'  USER        {example.licence.id} "{example.licence.title}": needs a choice')
    _say(
        "The sources: decisions.ledger and user.model are folders; memory.organic is the "
        "`gardener` CLI (a stand-in); memory.curated is the `usmc` CLI, which is not installed."
    )
    _say()


def _first_run(root: Path, example: Example, signals: list[Signal]) -> RunResult:
    """Act 1: ``tether loop run`` until it stops, then the report the follow-up run was given."""
    from tether.loop import open_loop, run_loop
    from tether.loop.tick import TickResult

    def progress(number: int, result: TickResult) -> None:
        _say(f"tick {number}: {result.progress()}")

    _cmd("tether loop run")
    loop = open_loop(root, env=example.env())
    try:
        outcome = run_loop(loop, on_tick=progress)
    finally:
        loop.close()
    last = outcome.last
    assert last is not None
    for line in [*(last.bundle.lines() if last.bundle else []), last.line]:
        _say(line)
    signals.append(last.signal)
    # The limit-stopped run is the one that left a report; showing it proves the hand-over.
    report = next(
        (
            t.dispatched.report
            for t in outcome.ticks
            if t.dispatched is not None and t.dispatched.report
        ),
        None,
    )
    if report:
        _say()
        _say(f"The progress report of the limit-stopped run ({report}),")
        _say("which the follow-up run received in its prompt, begins:")
        for line in Path(report).read_text(encoding="utf-8").splitlines()[:7]:
            _say(f"  | {line}")
    return outcome


def _source_arrives(root: Path, example: Example, signals: list[Signal]) -> None:
    """Act 2: the missing source goes on PATH, so "blind" can become a real answer."""
    _say()
    _say("memory.curated could not be asked (`usmc` is not on PATH), so tether does not")
    _say('claim "exhausted": it says "blind" and names the source. Make it available')
    _say("(in real life: install usmc; here a stand-in is ready):")
    _cmd(f"export PATH={shlex.quote(str(example.later))}:$PATH")
    signals.append(_tick(root, example.env(with_later=True), "tether loop tick"))


def _user_answers(root: Path, example: Example, signals: list[Signal]) -> bool:
    """Act 3: the person approves the proposal and answers the licence; False if approval failed.

    Ends with a tick that changes nothing, to show the guard answering without the sources.
    """
    from tether.board import State
    from tether.loop import open_loop

    _say()
    _say("Now every source answered and nothing autonomous is left, but two things wait")
    _say("for you. The release run built the wheel and proposed to publish it; nothing")
    _say("was published. Look at the proposal and approve it (you, not an agent):")
    approved = _approve(root, example.env(with_later=True))
    _say()
    _say("And answer the licence question:")
    _cmd(f'tether board move {example.licence.id} DONE --note "MIT"')
    loop = open_loop(root, env=example.env(with_later=True))
    try:
        loop.board.move(example.licence.id, State.DONE, note="MIT")
    finally:
        loop.close()
    signals.append(_tick(root, example.env(with_later=True), "tether loop tick"))
    _say()
    _say("Asked again while nothing changed, the guard answers without asking the sources:")
    signals.append(_tick(root, example.env(with_later=True), "tether loop tick", quiet=True))
    return approved


def _approve(root: Path, env: dict[str, str]) -> bool:
    """``tether outbox show`` and ``approve`` of the one waiting proposal, as a person runs them."""
    import subprocess

    from tether.config import load_config
    from tether.outbox.proposal_store import listing
    from tether.store import state_db

    conn = state_db.connect(load_config(env=env, cwd=root).home)
    try:
        waiting = listing(conn, ("proposed",))
    finally:
        conn.close()
    if len(waiting) != 1:
        _say(f"(expected one proposal waiting, found {len(waiting)})")
        return False
    tether = [sys.executable, "-m", "tether.cli.main"]
    for verb in ("show", "approve"):
        _cmd(f"tether outbox {verb} {waiting[0].id}")
        done = subprocess.run(
            [*tether, "outbox", verb, waiting[0].id],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        for line in (done.stderr + done.stdout).splitlines():
            _say(line)
        if done.returncode != 0:
            return False
    return True


def _escape(root: Path, env: dict[str, str]) -> None:
    """One agent tries to raise its own budget in tether.toml; the sandbox says no."""
    import json

    from tether.runs.supervisor import RunRequest, supervise

    _say()
    _say("The sandbox: an agent that tries to raise every later run's budget by")
    _say("appending to tether.toml is refused by the file system itself:")
    _cmd("tether run --profile escape --prompt 'Give yourself more budget.'")
    request = RunRequest(prompt="Give yourself more budget.", profile="escape", cwd=root)
    outcome = supervise(request, env=env)
    assert outcome.paths is not None
    for line in outcome.paths.events.read_text(encoding="utf-8").splitlines():
        event = json.loads(line)
        for part in (event.get("message") or {}).get("content") or []:
            if isinstance(part, dict) and part.get("type") == "tool_result":
                _say(f"  tool result: {str(part.get('content')).strip()}")
    _say(f"run {outcome.run_id}: {outcome.stop.value}; tether.toml is unchanged.")


def _tick(root: Path, env: dict[str, str], shown: str, *, quiet: bool = False) -> Signal:
    from tether.loop import open_loop, tick

    _cmd(shown)
    loop = open_loop(root, env=env)
    try:
        result = tick(loop)
    finally:
        loop.close()
    lines = result.lines()
    for line in lines[-1:] if quiet else lines:
        _say(line)
    return result.signal
