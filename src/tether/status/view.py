"""``tether status`` for people: the status object (see ``collect``) as boxed text panels."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from tether.status.textui import Block, Table, Text, boxed

if TYPE_CHECKING:
    from tether.loop.board_queue import Entry
    from tether.status.panels import EndedRun, RunFigures, RunningRun, Status

BAR_WIDTH = 6
LIST_SHOWN = 10  # ready and blocked tickets listed; the counts cover all


def number(value: float) -> str:
    """A count as people read it: 950, 30.4k, 1.07M (never ``1.06989e+06``)."""
    if abs(value) < 10_000:
        return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.2f}"
    for size, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= size:
            shown = f"{value / size:.2f}".rstrip("0").rstrip(".")
            return f"{shown}{unit}"
    return f"{value:,.0f}"  # pragma: no cover - every value >= 10,000 has a unit above


def duration(seconds: float) -> str:
    """45s, 12m, 5.2h, 3.4d (never ``28338618s``)."""
    if seconds < 120:
        return f"{seconds:.0f}s"
    if seconds < 7200:
        return f"{seconds / 60:.0f}m"
    if seconds < 172_800:
        return f"{seconds / 3600:.1f}h"
    return f"{seconds / 86_400:.1f}d"


def money(value: float) -> str:
    return f"${value:,.2f}"


def bar(
    used: float | None,
    limit: float | None,
    *,
    fmt: Callable[[float], str] = number,
    refused: int = 0,
) -> Text:
    """``███░░░░░░░ 3/10``; the figure alone without a limit, ``-`` when unknown.

    ``refused``: calls the limit turned away; the bar then stops at the limit and
    says so, instead of drawing a count over the budget.
    """
    if used is None:
        return Text.of("-", "dim")
    if not limit:
        return Text.of(fmt(used))
    share = max(0.0, min(1.0, used / limit))
    filled = round(share * BAR_WIDTH)
    style = "yellow" if refused else "red" if share >= 1 else "yellow" if share >= 0.8 else "green"
    text = Text.of("█" * filled, style)
    text.append("░" * (BAR_WIDTH - filled), "dim")
    text.append(f" {fmt(used)}/{fmt(limit)}")
    if refused:
        text.append(f" · {refused} refused", "yellow")
    return text


def age(seconds: float | None) -> str:
    return "-" if seconds is None else duration(seconds)


def _empty(text: str) -> Text:
    return Text.of(text, "dim")


def _or_dash(value: object) -> str:
    return "-" if value is None or value == "" else str(value)


# (header, used field, limit field of RunFigures, format); a column every run leaves
# unknown is left out
_RUN_FIGURES: tuple[tuple[str, str, str, Callable[[float], str]], ...] = (
    ("iterations", "iterations", "iteration_limit", number),
    ("tool calls", "tool_calls", "tool_call_limit", number),
    ("tokens", "tokens", "token_limit", number),
    ("cost", "cost_usd", "cost_limit_usd", money),
    ("time", "elapsed_seconds", "timeout_seconds", duration),
)


def _figure(figures: RunFigures, name: str) -> float | None:
    value: float | None = getattr(figures, name)
    return value


def running(status: Status) -> list[Block]:
    runs = status.running
    if not runs:
        return [_empty("no run in progress")]
    figures = [
        f
        for f in _RUN_FIGURES
        if any(_figure(r.figures, f[1]) is not None or _figure(r.figures, f[2]) for r in runs)
    ]
    table = Table(
        "run",
        "unit",
        "harness",
        *(f[0] for f in figures),
        "last event",
        keep=range(len(figures) + 3),
    )
    for r in runs:
        last = Text.of(age(r.last_event_age_seconds))
        if not r.supervisor_alive:
            last = Text.of("supervisor gone", "red")
        bars = [
            bar(_figure(r.figures, used), _figure(r.figures, limit), fmt=fmt)
            for _, used, limit, fmt in figures
        ]
        harness = _with(_or_dash(r.harness), None, unsandboxed(r))
        table.add_row(r.id, _or_dash(r.unit), harness, *bars, last)
    return [table]


def loops(status: Status) -> list[Block]:
    boards = status.loops
    if not boards:
        return [_empty("no loop has ticked")]
    parts: list[Block] = []
    for b in boards:
        last = b.last_tick
        parts.append(Text.of(b.board, "bold"))
        if last is None:
            parts.append(_empty("  no tick recorded"))
        else:
            style = "green" if last.signal == "continue" else "yellow"
            parts.append(Text.of(f"  {last.line}", style))
            code = "" if last.exit_code is None else f"exit {last.exit_code} · "
            parts.append(Text.of(f"  {code}{age(last.age_seconds)} ago ({last.at})"))
        guard = b.guard
        if guard is not None:
            unavailable = ", ".join(guard.unavailable) or "none unavailable"
            parts.append(Text.of(f"  guard: {guard.result} since {guard.at} ({unavailable})"))
        if b.waiting_count:
            parts.append(Text.of(f"  waited for you after that tick: {b.waiting_count}"))
            parts += [Text.of(f"    - {item}") for item in b.waiting_first]
    return parts


def _entry_table(entries: Sequence[Entry], *, root: str) -> Table:
    table = Table("ticket", "where", "title", "why", keep=(0, 1))
    for e in entries:
        t = e.ticket
        where = " ".join(str(v) for v in ((t.priority, t.location) if t else ()) if v)
        path = str(t.path if t is not None else e.path)
        table.add_row(
            (t.id if t else None) or _near(path, root),
            where or "-",
            _or_dash(t.title if t else None),
            e.why or "",
        )
    return table


def board(status: Status) -> list[Block]:
    found = status.board
    if found is None:
        return [_empty("no board folder in this project ([loop] board)")]
    if found.error is not None:
        return [Text.of(f"{found.folder}: {found.error}", "red")]
    counts = found.counts
    shown = " · ".join(f"{k} {v}" for k, v in counts.items() if v or k == "ACTIONABLE")
    parts: list[Block] = [Text.of(f"{found.folder}  ", "bold").append(shown)]
    root = found.root
    for entries, total, title, style in (
        (found.ready, found.ready_count, "next for the loop, in its order", "green"),
        (found.blocked, found.blocked_count, "blocked or waiting", "yellow"),
    ):
        if not total:
            parts.append(_empty(f"{title}: none"))
            continue
        more = f" (first {len(entries)} of {total})" if total > len(entries) else ""
        parts.append(Text.of(f"{title}{more}:", style))
        parts.append(_entry_table(entries, root=root))
    waiting = found.for_person
    if waiting:
        parts.append(Text.of(f"waits for a person: {len(waiting)}", "bold magenta"))
        parts.append(_entry_table(waiting, root=root))
    else:
        parts.append(_empty("waits for a person: nothing"))
    return parts


def watch(status: Status) -> list[Block]:
    panel = status.watch
    parts: list[Block] = []
    if panel.orchestrators:
        table = Table("orchestrator", "harness", "state")
        for o in panel.orchestrators:
            state = o.state
            if state == "idle":
                state = f"idle for {age(o.idle_seconds)}"
            elif state == "gone" and o.why:
                state = f"gone ({o.why})"
            table.add_row(f"#{o.id} {o.name}", o.harness or "-", state)
        parts.append(table)
    else:
        parts.append(_empty("no orchestrator registered"))
    if panel.subagents:
        table = Table("subagent", "state")
        for s in panel.subagents:
            table.add_row(s.get("label") or s.get("key") or "?", s.get("state") or "?")
        parts.append(table)
    else:
        parts.append(_empty("no subagent seen"))
    for w in panel.wakes:
        parts.append(Text.of(f"wake {w.at[:19]} {w.reason} → {w.outcome}"))
    return parts


def gate(status: Status) -> list[Block]:
    panel = status.gate
    if panel.error:
        return [Text.of(f"gate database: {panel.error}", "red")]
    shown = [s for s in panel.sessions if s.state != "ended"]
    hidden = len(panel.sessions) - len(shown)
    parts: list[Block] = []
    if not shown:
        parts.append(_empty(f"no session at {panel.near_budget:.0%} of its call budget or more"))
    else:
        table = Table("session", "calls", "state", "run", keep=(0, 1))
        for s in shown:
            budget = s.call_budget
            refused = max(0, s.calls_used - budget) if budget else 0
            table.add_row(
                s.session_id,
                bar(s.calls_used - refused, budget, refused=refused),
                s.state or "near",
                _or_dash(s.run_id),
            )
        parts.append(table)
    if hidden:
        noun = "session" if hidden == 1 else "sessions"
        parts.append(_empty(f"{hidden} more {noun} of runs that have ended: over, not listed"))
    return parts


def ingest(status: Status) -> list[Block]:
    panel = status.ingest
    if panel.wiki is None:
        return [_empty("no wiki configured ([wiki] root)")]
    if panel.error:
        return [Text.of(f"{panel.wiki}: {panel.error}", "red")]
    return [
        Text.of(
            f"quarantine {panel.quarantine} · waiting {panel.waiting} · "
            f"claimed {panel.claimed} · done {panel.done}"
        )
    ]


def room(status: Status) -> list[Block]:
    rooms = status.rooms
    if not rooms:
        return [_empty("no room open")]
    return [Text.of(f"room {r.room} (pid {r.pid}): {r.question}") for r in rooms]


def _near(path: str | None, home: str) -> str:
    """A path inside the home, shown from there (``runs/ID/report.md``)."""
    if not path:
        return "-"
    return path.removeprefix(home.rstrip("/") + "/")


def unsandboxed(run: RunningRun | EndedRun) -> Text:
    """`` UNSANDBOXED`` for a run whose agent had no sandbox (its record's ``sandbox`` is
    ``off: <why>``); nothing for a sandboxed run or one from before sandboxes."""
    sandbox = run.sandbox
    off = isinstance(sandbox, str) and sandbox.startswith("off")
    return Text.of(" UNSANDBOXED", "bold red") if off else Text()


def _with(text: str, style: str | None, extra: Text) -> Text:
    out = Text.of(text, style)
    out.spans += extra.spans
    return out


def _status_style(status: str) -> str:
    return "green" if status == "completed" else "blue" if status == "running" else "red"


def ended(status: Status) -> list[Block]:
    runs = status.ended
    if not runs:
        return [_empty("no run has ended")]
    table = Table("run", "unit", "status", "stop reason", "exit", "ended", "report")
    for r in runs:
        table.add_row(
            r.id,
            _or_dash(r.unit),
            _with(r.status, _status_style(r.status), unsandboxed(r)),
            _or_dash(r.stop_reason),
            _or_dash(r.exit_code),
            (r.ended_at or "-")[:19],
            _near(r.report, status.home),
        )
    return [table]


def fleet(status: Status) -> list[Block]:
    from tether.fleet.panel import FleetUnreadable

    found = status.fleet  # the fleet's own panel (tether.fleet.status)
    if found is None:
        return [_empty("no fleet in this home")]
    if isinstance(found, FleetUnreadable):
        return [_empty(f"{found.database}: {found.error}")]
    alive = [w.name for w in found.workers if w.alive]
    silent = [w.name for w in found.workers if not w.alive]
    table = Table("project", "state", "worker", "units", "queued", "last signal line")
    for p in found.projects:
        line = (p.stopped_reason if p.state == "stopped" else p.last_line) or ""
        table.add_row(
            p.name,
            p.state,
            p.worker or "",
            str(p.units_done),
            str(p.queue_depth),
            line,
        )
    head = Text.of(
        f"workers alive: {', '.join(alive) or 'none'}"
        + (f"; silent: {', '.join(silent)}" if silent else "")
    )
    return [head, table]


PANELS: dict[str, tuple[str, Callable[[Status], list[Block]]]] = {
    "running": ("Runs in progress", running),
    "loops": ("Loop", loops),
    "board": ("Board", board),
    "watch": ("Watchdog", watch),
    "gate": ("Gate sessions near their budget", gate),
    "ingest": ("Ingest queue", ingest),
    "room": ("Room", room),
    "ended": ("Last ended runs", ended),
    "fleet": ("Fleet", fleet),
}


def panel(status: Status, name: str, width: int) -> list[Text]:
    title, draw = PANELS[name]
    return boxed(title, draw(status), width)


def screen(status: Status, width: int) -> list[Text]:
    head = Text.of(f"tether status · {status.generated_at[:19]}Z · home {status.home}", "bold")
    lines = [head.crop(width)]  # a line wider than the terminal would wrap and push the rest
    for name in PANELS:
        lines += panel(status, name, width)
    return lines
