"""``tether session``: new session ids at legitimate boundaries, their log, and status."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from contextlib import contextmanager

import click

from tether.core.errors import ConfigError, TetherError, UsageError
from tether.core.exit_codes import ExitCode


class SessionRefusedError(TetherError):
    """A new session id is not legitimate here."""

    exit_code = ExitCode.GATE_REFUSED


def _home() -> str:
    from tether.core.project import resolve_home

    return resolve_home()


@contextmanager
def _gate_db(home: str) -> Iterator[None]:
    """Turn a gate database that cannot be used into one clear error (exit 3)."""
    from tether.gate import gate_db as db

    try:
        yield
    except (db.GateDatabaseError, db.Error) as exc:
        path = db.db_file(home)
        raise ConfigError(db.unusable_message(path, exc), path=path) from None


def _when(at: float | None) -> str:
    if at is None:
        return "-"
    return dt.datetime.fromtimestamp(at).astimezone().strftime("%Y-%m-%d %H:%M:%S")


@click.group()
def session() -> None:
    """Session ids the call-budget gate counts under."""


@session.command("new")
@click.option(
    "--reason",
    required=True,
    type=click.Choice(["unit-boundary", "user-request"]),
    help="unit-boundary: the next unit recorded in --plan starts; "
    "user-request: a human asked to go on in the same context.",
)
@click.option(
    "--plan", "plan_path", metavar="PLAN.md", help="Plan file recording the unit boundary."
)
@click.option("--unit", metavar="ID", help="The unit (as recorded in the plan) that starts now.")
@click.option(
    "--session",
    "session_id",
    metavar="ID",
    help="The session (or context) to follow; default: the one that passed the gate last.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the new session as JSON.")
def new(
    reason: str, plan_path: str | None, unit: str | None, session_id: str | None, as_json: bool
) -> None:
    """Start a new session id (a fresh call budget) for the current context.

    Refused inside an agent's process tree, for a unit that is not a recorded
    boundary of the plan (or already started one), and for a locked session
    unless a human asks at a terminal (--reason user-request).
    """
    from tether.gate.newsession import NewSessionRefusedError, new_session
    from tether.gate.plan import PlanError

    if reason == "unit-boundary" and (not plan_path or not unit):
        raise UsageError("--reason unit-boundary needs --plan PLAN.md and --unit ID.")
    if reason == "user-request" and (plan_path or unit):
        raise UsageError("--plan and --unit belong to --reason unit-boundary.")
    home = _home()
    try:
        with _gate_db(home):
            record = new_session(
                home, reason=reason, plan_path=plan_path, unit=unit, session=session_id
            )
    except NewSessionRefusedError as exc:
        raise SessionRefusedError(str(exc)) from None
    except PlanError as exc:
        raise ConfigError(str(exc), key="plan", path=plan_path) from None
    if as_json:
        from tether.cli.render import print_json

        print_json(record.as_dict())
        return
    click.echo(f"new session {record.session_id}")
    click.echo(f"  follows   {record.previous_session_id} (context {record.context_key})")
    click.echo(f"  reason    {record.reason}" + (f", unit {unit} of {record.plan}" if unit else ""))
    click.echo(f"  budget    {record.call_budget} calls")
    click.echo(f"  by        {record.who}")


@session.command("log")
@click.option("--limit", type=click.IntRange(min=1), help="Show only the newest N entries.")
@click.option("--json", "as_json", is_flag=True, help="Print the log as JSON.")
def log(limit: int | None, as_json: bool) -> None:
    """Every new session id, newest first, with its reason and who asked."""
    from tether.gate.newsession import session_log

    home = _home()
    with _gate_db(home):
        entries = session_log(home, limit)
    if as_json:
        from tether.cli.render import print_json

        print_json([e.as_dict() for e in entries])
        return
    if not entries:
        click.echo("no new session ids recorded yet")
        return
    from tether.cli.render import print_table

    rows = [
        (
            _when(e.at),
            e.session_id,
            e.previous_session_id,
            e.reason,
            f"{e.unit} ({e.plan})" if e.unit else "",
            e.who,
        )
        for e in entries
    ]
    print_table(None, ("when", "session", "follows", "reason", "unit", "who"), rows)


@session.command("status")
@click.option(
    "--session", "session_id", metavar="ID", help="Default: the session that passed the gate last."
)
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
def status(session_id: str | None, as_json: bool) -> None:
    """Calls used, call budget, iterations and lock state of a session."""
    from tether.gate import gate_db as db
    from tether.gate import messages
    from tether.gate.counter import status_row
    from tether.gate.newsession import latest_context

    home = _home()
    with _gate_db(home):
        conn = db.connect(home)
        try:
            target = session_id or latest_context(conn)
            if target is None:
                raise UsageError("no session has passed the gate yet; name one with --session ID.")
            data = status_row(conn, target, follow_context=session_id is None).as_dict()
        finally:
            conn.close()
    if as_json:
        from tether.cli.render import print_json

        print_json(data)
        return
    iterations = data["iteration_budget"]
    click.echo(f"session     {data['session_id']}")
    click.echo(
        f"calls       {messages.calls_used(data['calls_used'], data['call_budget'])}"
        + ("  LOCKED" if data["locked"] else "")
    )
    click.echo(f"budget from {data['budget_source']}")
    click.echo(f"iterations  {messages.iterations_used(data['batches'], iterations)}")
    if data.get("run_id"):
        click.echo(f"run         {data['run_id']}")
    click.echo(f"last call   {_when(data['updated_at'])}")
