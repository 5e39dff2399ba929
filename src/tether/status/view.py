"""``tether status`` for people: the status object (see ``collect``) as rich panels."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

BAR_WIDTH = 10


def bar(used: float | None, limit: float | None, *, fmt: str = "{:g}") -> Text:
    """``███░░░░░░░ 3/10``; the figure alone when there is no limit, ``-`` when unknown."""
    if used is None:
        return Text("-", style="dim")
    figure = fmt.format(used)
    if not limit:
        return Text(figure)
    share = max(0.0, min(1.0, used / limit))
    filled = round(share * BAR_WIDTH)
    style = "red" if share >= 1 else "yellow" if share >= 0.8 else "green"
    text = Text("█" * filled, style=style)
    text.append("░" * (BAR_WIDTH - filled), style="dim")
    text.append(f" {figure}/{fmt.format(limit)}")
    return text


def age(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    if seconds < 120:
        return f"{seconds:.0f}s"
    if seconds < 7200:
        return f"{seconds / 60:.0f}m"
    return f"{seconds / 3600:.1f}h"


def _table(*columns: str) -> Table:
    table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
    for column in columns:
        table.add_column(column, overflow="fold")
    return table


def _empty(text: str) -> Text:
    return Text(text, style="dim")


def running(status: dict[str, Any]) -> RenderableType:
    runs = status["running"]
    if not runs:
        return _empty("no run in progress")
    table = _table(
        "run",
        "unit",
        "harness",
        "session",
        "iterations",
        "tool calls",
        "tokens",
        "cost",
        "time",
        "last event",
    )
    table.columns[0].no_wrap = True
    for r in runs:
        last = age(r.get("last_event_age_seconds"))
        if not r.get("supervisor_alive", True):
            last += " (supervisor gone)"
        table.add_row(
            r["id"],
            r.get("unit") or "-",
            f"{r.get('harness')} ({r.get('profile')})",
            (r.get("session_id") or "-")[:12],
            bar(r.get("iterations"), r.get("iteration_limit")),
            bar(r.get("tool_calls"), r.get("tool_call_limit")),
            bar(r.get("tokens"), r.get("token_limit")),
            bar(r.get("cost_usd"), r.get("cost_limit_usd"), fmt="${:.2f}"),
            bar(r.get("elapsed_seconds"), r.get("timeout_seconds"), fmt="{:.0f}s"),
            last,
        )
    return table


def loops(status: dict[str, Any]) -> RenderableType:
    boards = status["loops"]
    if not boards:
        return _empty("no loop has ticked")
    parts: list[RenderableType] = []
    for b in boards:
        last = b.get("last_tick")
        head = Text(b["board"], style="bold")
        parts.append(head)
        if last is None:
            parts.append(_empty("  no tick recorded"))
        else:
            style = "green" if last["signal"] == "continue" else "yellow"
            line = Text(f"  {last['line']}", style=style)
            parts.append(line)
            parts.append(
                Text(f"  exit {last['exit_code']} · {age(last['age_seconds'])} ago ({last['at']})")
            )
        guard = b.get("guard")
        if guard is not None:
            unavailable = ", ".join(guard.get("unavailable") or []) or "none unavailable"
            parts.append(Text(f"  guard: {guard['result']} since {guard['at']} ({unavailable})"))
        bundle = b.get("user_bundle") or {}
        if bundle.get("count"):
            parts.append(Text(f"  waits for you: {bundle['count']}"))
            parts += [Text(f"    - {item}") for item in bundle.get("first", [])]
    return Group(*parts)


def watch(status: dict[str, Any]) -> RenderableType:
    panel = status["watch"]
    parts: list[RenderableType] = []
    if panel["orchestrators"]:
        table = _table("orchestrator", "harness", "state")
        for o in panel["orchestrators"]:
            state = o.get("state", "?")
            if state == "idle":
                state = f"idle for {age(o.get('idle_seconds'))}"
            elif state == "gone" and o.get("why"):
                state = f"gone ({o['why']})"
            table.add_row(f"#{o['id']} {o['name']}", o.get("harness") or "-", state)
        parts.append(table)
    else:
        parts.append(_empty("no orchestrator registered"))
    if panel["subagents"]:
        table = _table("subagent", "state")
        for s in panel["subagents"]:
            table.add_row(s.get("label") or s.get("key") or "?", s.get("state") or "?")
        parts.append(table)
    else:
        parts.append(_empty("no subagent seen"))
    for w in panel["wakes"]:
        parts.append(Text(f"wake {w['at'][:19]} {w['reason']} → {w['outcome']}"))
    return Group(*parts)


def gate(status: dict[str, Any]) -> RenderableType:
    panel = status["gate"]
    if panel.get("error"):
        return Text(f"gate database: {panel['error']}", style="red")
    if not panel["sessions"]:
        return _empty(f"no session at {panel['near_budget']:.0%} of its call budget or more")
    table = _table("session", "calls", "state", "run")
    for s in panel["sessions"]:
        state = "locked" if s["locked"] else "over" if s["over"] else "near"
        table.add_row(
            s["session_id"], bar(s["calls_used"], s["call_budget"]), state, s.get("run_id") or "-"
        )
    return table


def ingest(status: dict[str, Any]) -> RenderableType:
    panel = status["ingest"]
    if panel.get("wiki") is None:
        return _empty("no wiki configured ([wiki] root)")
    if panel.get("error"):
        return Text(f"{panel['wiki']}: {panel['error']}", style="red")
    return Text(
        f"quarantine {panel['quarantine']} · waiting {panel['waiting']} · "
        f"claimed {panel['claimed']} · done {panel['done']}"
    )


def room(status: dict[str, Any]) -> RenderableType:
    rooms = status["room"]["open"]
    if not rooms:
        return _empty("no room open")
    return Group(*(Text(f"room {r['room']} (pid {r['pid']}): {r['question']}") for r in rooms))


def _near(path: str | None, home: str) -> str:
    """A path inside the home, shown from there (``runs/ID/report.md``)."""
    if not path:
        return "-"
    return path.removeprefix(home.rstrip("/") + "/")


def ended(status: dict[str, Any]) -> RenderableType:
    runs = status["ended"]
    if not runs:
        return _empty("no run has ended")
    table = _table("run", "status", "stop reason", "exit", "ended", "report")
    table.columns[0].no_wrap = True
    for r in runs:
        table.add_row(
            r["id"],
            r["status"],
            r.get("stop_reason") or "-",
            str(r.get("exit_code")),
            (r.get("ended_at") or "-")[:19],
            _near(r.get("report"), status["home"]),
        )
    return table


def fleet(status: dict[str, Any]) -> RenderableType:
    found = status.get("fleet")
    if found is None:
        return _empty("no fleet in this home")
    if "error" in found:
        return _empty(f"{found['database']}: {found['error']}")
    alive = [w["name"] for w in found["workers"] if w["alive"]]
    silent = [w["name"] for w in found["workers"] if not w["alive"]]
    table = _table("project", "state", "worker", "units", "queued", "last signal line")
    for p in found["projects"]:
        line = p["stopped_reason"] if p["state"] == "stopped" else (p["last_line"] or "")
        table.add_row(
            p["name"],
            p["state"],
            p["worker"] or "",
            str(p["units_done"]),
            str(p["queue_depth"]),
            line,
        )
    head = Text(
        f"workers alive: {', '.join(alive) or 'none'}"
        + (f"; silent: {', '.join(silent)}" if silent else "")
    )
    return Group(head, table)


PANELS: dict[str, tuple[str, Callable[[dict[str, Any]], RenderableType]]] = {
    "running": ("Runs in progress", running),
    "loops": ("Loop", loops),
    "watch": ("Watchdog", watch),
    "gate": ("Gate sessions near their budget", gate),
    "ingest": ("Ingest queue", ingest),
    "room": ("Room", room),
    "ended": ("Last ended runs", ended),
    "fleet": ("Fleet", fleet),
}


def panel(status: dict[str, Any], name: str) -> Panel:
    title, render = PANELS[name]
    return Panel(render(status), title=title, title_align="left")


def screen(status: dict[str, Any]) -> Group:
    head = Text(
        f"tether status · {status['generated_at'][:19]}Z · home {status['home']}", style="bold"
    )
    return Group(head, *(panel(status, name) for name in PANELS))
