"""The gate's reference pages say what the code does; their examples run."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tether.core import agent_tree
from tether.gate import contracts, hook, hook_json, messages
from tether.gate.counter import SessionStatus
from tether.gate.plan import parse_plan

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _page(name: str) -> str:
    return (DOCS / name).read_text(encoding="utf-8")


def _blocks(name: str, lang: str) -> list[str]:
    fences = re.findall(r"^```(\w*)\n(.*?)^```$", _page(name), flags=re.DOTALL | re.MULTILINE)
    return [body for kind, body in fences if kind == lang]


def test_the_usage_block_is_the_commands_own() -> None:
    (usage,) = [b for b in _blocks("reference/tether-gate.md", "") if b.startswith("usage:")]
    assert usage == "".join(hook.USAGE.splitlines(keepends=True)[:3])


def test_the_documented_refusal_is_the_real_one() -> None:
    (text,) = _blocks("reference/tether-gate.md", "text")
    session = re.search(r"in session (\S+)\. Do", text)
    assert session is not None
    assert text.strip() == messages.refusal(session.group(1), 60, 60)


@pytest.mark.parametrize("harness", contracts.HARNESSES)
def test_the_documented_answers_are_the_real_ones(harness: str) -> None:
    page = _page("reference/tether-gate.md")
    deny = contracts.deny(harness, "M").replace('"M"', "MESSAGE")
    assert f"`{deny}`" in page
    stop = contracts.stop(harness, "M")
    if stop is not None:
        assert "`" + stop.replace('"M"', "MESSAGE") + "`" in page


def test_the_python_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (block,) = _blocks("reference/tether-gate.md", "python")
    namespace: dict[str, object] = {}
    exec(compile(block, "tether-gate.md", "exec"), namespace)  # noqa: S102 - our own doc
    status = namespace["status"]
    assert isinstance(status, SessionStatus)
    assert (status.call_budget, status.iteration_budget, status.locked) == (40, 15, False)


def test_the_plan_example_records_what_the_page_says() -> None:
    (plan,) = _blocks("reference/plan-file.md", "markdown")
    units = parse_plan(plan)
    assert [(u.id, u.done) for u in units] == [
        ("source-a", False),
        ("source-b", True),
        ("source-c", False),
        ("ticket-42", False),
    ]
    (block,) = _blocks("reference/plan-file.md", "python")
    exec(compile(block, "plan-file.md", "exec"), {})  # noqa: S102 - our own doc


def test_the_hooks_page_lists_the_installed_events() -> None:
    page = _page("reference/hooks.md")
    for harness, events in (
        ("claude-code", hook_json.CLAUDE_EVENTS),
        ("codex", hook_json.CODEX_EVENTS),
        ("copilot", hook_json.COPILOT_EVENTS),
    ):
        rows = [line for line in page.splitlines() if line.startswith(f"| `{harness}` |")]
        what = rows[0].split("|")[4]  # the "What is written where" table comes first
        assert set(re.findall(r"`(\w+)`", what)) == set(events), harness


def test_the_session_page_lists_the_agent_markers() -> None:
    page = _page("reference/session.md")
    for name in agent_tree.AGENT_ENV_MARKERS:
        assert f"`{name}`" in page


def test_the_state_section_lists_every_event_column_and_the_limits() -> None:
    from tether.gate import counter, eventlog, gate_db

    page = _page("reference/tether-gate.md")
    (row,) = [line for line in page.splitlines() if line.startswith("| `events` |")]
    decisions = {"allow", "deny", "continue", "stop", "record", counter.UNREAD, counter.ROOM_RULE}
    assert all(f"`{d}`" in row for d in decisions), row
    assert set(re.findall(r"`(\w+)`", row)) - {"events", *decisions} == (
        set(eventlog.COLUMNS) - {"id"}
    )
    versions = re.findall(r"^\| (\d+) \| ", page, flags=re.MULTILINE)
    assert [int(v) for v in versions] == list(range(1, gate_db.SCHEMA_VERSION + 1))
    assert f"cut to {contracts.TOOL_INPUT_MAX} characters" in page
    assert f"cut to {contracts.MESSAGE_MAX} characters" in page


@pytest.mark.parametrize("command", ["install", "uninstall"])
def test_the_hooks_usage_block_names_every_option(command: str) -> None:
    from tether.cli.hooks import hooks

    (usage,) = [b for b in _blocks("reference/hooks.md", "") if "tether hooks install" in b]
    (line,) = [ln for ln in usage.splitlines() if ln.startswith(f"tether hooks {command} ")]
    options = {
        opt
        for param in hooks.commands[command].params
        for opt in param.opts
        if opt.startswith("--") and opt != "--help"
    }
    assert options == set(re.findall(r"--[\w-]+", line))
    table = _page("reference/hooks.md")
    assert all(f"| `{opt}` |" in table for opt in options)
