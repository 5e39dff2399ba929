"""``tether run``: supervise one agent session on one unit."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from tether.cli.render import print_json
from tether.core.errors import UsageError

if TYPE_CHECKING:
    from tether.runs.outcome import RunOutcome


@click.command()
@click.option("--profile", "profile", help="A configured profile (default: the default one).")
@click.option("--unit", help="What this run works on (ticket id, source, question).")
@click.option("--prompt", "prompt_text", help="The instruction for the agent.")
@click.option(
    "--prompt-file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Read the instruction from a file ('-' for stdin).",
)
@click.option(
    "--iterations",
    type=click.IntRange(min=1),
    help="Iteration limit (model steps) for this run.",
)
@click.option("--tool-calls", type=click.IntRange(min=1), help="Tool-call limit for this run.")
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    help="Wall-clock limit in seconds.",
)
@click.option(
    "--tokens",
    type=click.IntRange(min=1),
    metavar="N",
    help="Token limit: input + output tokens as the harness reports them.",
)
@click.option(
    "--cost",
    "cost_usd",
    type=click.FloatRange(min=0, min_open=True),
    metavar="USD",
    help="Cost limit in USD (only for harnesses that report cost, or derive it: Vibe).",
)
@click.option(
    "--follow-up",
    "follow_up",
    metavar="RUN_ID",
    help="Continue a limit-stopped run: its report goes into the prompt.",
)
@click.option(
    "--budget-request",
    type=click.IntRange(min=1),
    metavar="N",
    help="A planner's iteration budget for this unit (needs --justification).",
)
@click.option("--justification", help="Why this unit needs a stronger profile or budget.")
@click.option(
    "--no-sandbox",
    is_flag=True,
    help="Run the agent without tether's sandbox (it can then touch what you can).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the run record as JSON.")
def run(
    profile: str | None,
    unit: str | None,
    prompt_text: str | None,
    prompt_file: Path | None,
    iterations: int | None,
    tool_calls: int | None,
    timeout: float | None,
    tokens: int | None,
    cost_usd: float | None,
    follow_up: str | None,
    budget_request: int | None,
    justification: str | None,
    no_sandbox: bool,
    as_json: bool,
) -> None:
    """Run one agent session on one unit within hard budgets.

    Exit codes: 0 completed, 20 iteration limit, 21 tool-call limit, 22 timeout,
    23 the harness failed, 24 cancelled, 25 token limit, 26 cost limit, 27 output
    limit (events.jsonl over events_max_bytes or stderr.log over
    stderr_max_bytes), 40 completed but a post-run stage failed; 3 when the
    sandbox cannot start (the message names the fix), 30 when started inside
    another run.
    """
    from tether.runs.supervisor import RunRequest, supervise

    text = _prompt(prompt_text, prompt_file)
    if profile is None:
        _note_when_the_agent_is_fake()
    outcome = supervise(
        RunRequest(
            prompt=text,
            profile=profile,
            unit=unit,
            iterations=iterations,
            tool_calls=tool_calls,
            timeout=timeout,
            tokens=tokens,
            cost_usd=cost_usd,
            follow_up=follow_up,
            budget_request=budget_request,
            justification=justification,
            no_sandbox=no_sandbox,
        )
    )
    if as_json:
        _print_record(outcome)
    else:
        _say_how_it_ended(outcome)
    sys.exit(int(outcome.exit_code))


def _prompt(prompt_text: str | None, prompt_file: Path | None) -> str:
    """The instruction from ``--prompt`` or ``--prompt-file`` (exactly one), never empty."""
    if (prompt_text is None) == (prompt_file is None):
        raise UsageError("give exactly one of --prompt TEXT or --prompt-file FILE.")
    if prompt_file is not None:
        try:
            raw = sys.stdin.buffer.read() if str(prompt_file) == "-" else prompt_file.read_bytes()
            text = raw.decode("utf-8")
        except OSError as exc:
            raise UsageError(f"cannot read --prompt-file {prompt_file}: {exc.strerror}") from exc
        except UnicodeDecodeError as exc:
            raise UsageError(
                f"--prompt-file {prompt_file} is not UTF-8 text (byte {exc.start}); "
                "save it as UTF-8."
            ) from exc
    else:
        text = prompt_text or ""
    if not text.strip():
        raise UsageError("the prompt is empty.")
    return text


def _print_record(outcome: RunOutcome) -> None:
    collected = outcome.proposals
    print_json(
        outcome.record()
        | {
            "report": outcome.report.as_dict() if outcome.report is not None else None,
            "proposals": outcome.pending_proposals,
            "proposals_refused": collected.refused if collected else [],
        }
    )


def _say_how_it_ended(outcome: RunOutcome) -> None:
    """The run's end in a line, then only what is news: the report, the sandbox, proposals."""
    led = outcome.ledger
    why = outcome.failure.words() if outcome.failure is not None else ""
    click.echo(
        f"run {outcome.run_id}: {outcome.stop.value}{why} — {led.iterations} iteration(s), "
        f"{led.tool_calls} tool call(s), {led.tool_results} result(s), "
        f"session {led.session_id or outcome.row.session_id}"
    )
    if outcome.report is not None and outcome.paths is not None:
        click.echo(f"report: {outcome.paths.report_md}")
    from tether.runs.run_report import sandbox_lines

    # news only: an unsandboxed run, a refused host, a process killed
    for line in sandbox_lines(outcome.sandbox)[1:] or sandbox_lines(outcome.sandbox):
        if line != "- sandbox: bubblewrap":
            click.echo(line.removeprefix("- "))
    failed = outcome.failed_stage
    if failed is not None and outcome.paths is not None:
        click.echo(
            f"post-run stage failed (exit {failed.exit_code}): "
            f"{' '.join(failed.command)} — output in {outcome.paths.stages}"
        )
    collected = outcome.proposals
    for proposal in collected.proposals if collected else []:
        click.echo(
            f"proposal {proposal.id} waits for a person: {proposal.headline} "
            f"(`tether outbox show {proposal.id}`)"
        )
    for refused in collected.refused if collected else []:
        click.echo(f"proposal not collected: {refused}")


def _note_when_the_agent_is_fake() -> None:
    """No profile configured: the run uses tether's scripted agent, and the user must know."""
    from tether.config import load_config

    if load_config().default_profile.builtin:
        click.echo(
            "tether: note: no profile is configured, so this run uses the built-in scripted "
            "agent (a fake model that runs a few harmless commands). Configure a real agent "
            'in tether.toml, e.g. [profiles.claude] harness = "claude-code" default = true '
            "(docs/reference/config.md).",
            err=True,
        )
