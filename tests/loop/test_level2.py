"""Level 2: the four sources, exhausted vs blind, the guard, the user-only bundle.

(docs/reference/loop.md)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.loop.conftest import BASE_TOML, Project, reads, write_script

from tether.board import State
from tether.loop import Signal, run_loop, tick
from tether.loop.level2 import ROLE_ORDER

ALL_ROLES = list(ROLE_ORDER)


def _statuses(result: Any) -> dict[str, str]:
    return {r.role: r.status for r in result.level2.reports}


def test_all_four_answerable_and_empty_is_exhausted(project: Project) -> None:
    project.all_sources_ready()
    result = tick(project.open())
    assert result.signal is Signal.EXHAUSTED and int(result.exit_code) == 10
    assert _statuses(result) == dict.fromkeys(ALL_ROLES, "empty")
    assert result.line == (
        "TETHER-LOOP: STOP (exhausted) — all 4 sources asked, all empty. Proven: no work left."
    )


@pytest.mark.parametrize("missing", ALL_ROLES)
def test_one_missing_source_is_blind_naming_it(project: Project, missing: str) -> None:
    project.all_sources_ready()
    if missing == "decisions.ledger":
        (project.decisions / "DECIDED-AND-DONE.md").unlink()
        project.decisions.rmdir()
    elif missing == "user.model":
        project.profile.rmdir()
    else:
        name = "organic-memory" if missing == "memory.organic" else "curated-memory"
        (project.bin / name).unlink()
    loop = project.open(spy=True)
    result = tick(loop)
    assert result.signal is Signal.BLIND and int(result.exit_code) == 11
    assert result.line == (
        f"TETHER-LOOP: STOP (blind, 1/4 sources unavailable: {missing}) — at least one source "
        f"unavailable. Not proven, only not checkable."
    )
    statuses = _statuses(result)
    assert statuses.pop(missing) == "unavailable"
    assert set(statuses.values()) == {"empty"}
    assert reads(loop)[missing] == 0  # never read what could not be located


@pytest.mark.parametrize(
    ("output", "exit_code", "why"),
    [
        ("not json", 0, "output is not JSON"),
        ({"status": "empty", "items": []}, 3, "exit 3"),
        ({"what": "ever"}, 0, "expected a JSON list"),
    ],
)
def test_a_located_source_whose_read_fails_is_unavailable_not_empty(
    project: Project, output: Any, exit_code: int, why: str
) -> None:
    project.all_sources_ready()
    write_script(project.bin / "curated-memory", output, exit_code=exit_code)
    result = tick(project.open())
    assert result.signal is Signal.BLIND
    assert result.level2 is not None
    report = next(r for r in result.level2.reports if r.role == "memory.curated")
    assert report.located is True and report.status == "unavailable"
    assert why in (report.reason or "")


def test_a_command_source_past_its_timeout_is_unavailable(project: Project) -> None:
    project.all_sources_ready()
    write_script(project.bin / "organic-memory", {"status": "empty", "items": []}, sleep=30)
    text = (project.root / "tether.toml").read_text()
    (project.root / "tether.toml").write_text(
        text.replace(
            'command = ["organic-memory", "--json"]',
            'command = ["organic-memory", "--json"]\ntimeout = "300ms"',
        )
    )
    result = tick(project.open())
    assert result.level2 is not None
    report = next(r for r in result.level2.reports if r.role == "memory.organic")
    assert report.status == "unavailable" and "timeout" in (report.reason or "")


@pytest.mark.parametrize("blind", [False, True], ids=["exhausted", "blind"])
def test_within_the_interval_the_guard_stops_without_reading_the_sources(
    project: Project, blind: bool
) -> None:
    project.all_sources_ready()
    if blind:
        (project.bin / "organic-memory").unlink()
    loop = project.open(spy=True)
    first = tick(loop)
    assert first.signal is (Signal.BLIND if blind else Signal.EXHAUSTED)
    counted = reads(loop)
    project.clock.advance(14 * 60)
    second = tick(loop)
    expected = Signal.GUARD_BLIND if blind else Signal.GUARD_EXHAUSTED
    assert second.signal is expected and int(second.exit_code) == (13 if blind else 12)
    assert reads(loop) == counted  # not one source read again
    word = "blind" if blind else "exhausted"
    assert second.line.startswith(
        f"TETHER-LOOP: STOP (guard, {word} unchanged since 2026-03-02T09:00:00Z) — guard active"
    )
    project.clock.advance(60)  # 15 minutes: the interval is over
    third = tick(loop)
    assert third.signal is first.signal
    assert sum(reads(loop).values()) > sum(counted.values())


def test_a_source_that_becomes_available_changes_the_fingerprint_and_the_chain_runs(
    project: Project,
) -> None:
    project.all_sources_ready()
    organic = project.bin / "organic-memory"
    organic.rename(project.root / "organic-memory.off")
    loop = project.open(spy=True)
    assert tick(loop).signal is Signal.BLIND
    assert tick(loop).signal is Signal.GUARD_BLIND
    before = reads(loop)
    (project.root / "organic-memory.off").rename(organic)  # installed: nobody resets the guard
    project.clock.advance(60)
    again = tick(loop)
    assert again.signal is Signal.EXHAUSTED
    assert again.level2 is not None and "availability changed" in again.level2.guard_why
    assert reads(loop)["memory.organic"] == before["memory.organic"] + 1


def test_a_source_that_disappears_changes_the_fingerprint_too(project: Project) -> None:
    project.all_sources_ready()
    loop = project.open(spy=True)
    assert tick(loop).signal is Signal.EXHAUSTED
    (project.bin / "curated-memory").unlink()
    result = tick(loop)
    assert result.signal is Signal.BLIND
    assert result.level2 is not None and result.level2.unavailable == ["memory.curated"]


def test_a_new_actionable_ticket_or_decision_changes_the_situation(project: Project) -> None:
    project.all_sources_ready()
    loop = project.open(spy=True)
    assert tick(loop).signal is Signal.EXHAUSTED
    assert tick(loop).signal is Signal.GUARD_EXHAUSTED
    (project.decisions / "DECIDED-AND-DONE.md").write_text("- 2026-03-02 keep the old API\n")
    result = tick(loop)
    assert result.signal is Signal.EXHAUSTED  # read again: a decision naming no ticket is no work
    assert result.level2 is not None and result.level2.guard_why == "the situation changed"


@pytest.mark.parametrize(
    ("pattern", "kind"),
    [
        ("- 🔴 On Fridays, update the changelog", "low"),
        ("- confidence: 0.3 — rotate the logs weekly", "low"),
        ("- rotate the logs weekly (no confidence given: prose, not a pattern)", "none"),
        ("- 🟢 After a release, close its milestone", "found"),
        ("- confidence: high — archive old runs monthly", "found"),
    ],
)
def test_user_model_counts_a_pattern_only_at_sufficient_confidence(
    project: Project, pattern: str, kind: str
) -> None:
    project.all_sources_ready()
    (project.profile / "patterns.md").write_text(f"# Patterns\n\n{pattern}\n")
    loop = project.open()
    result = tick(loop)
    assert result.level2 is not None
    report = next(r for r in result.level2.reports if r.role == "user.model")
    if kind == "found":
        assert report.status == "found" and result.signal is Signal.CONTINUE
        notes = loop.board.load().untriaged()
        assert len(notes) == 1 and notes[0].name.startswith("user.model-")
        assert pattern.lstrip("- ") in notes[0].read_text()
    elif kind == "low":
        assert report.status == "empty"
        assert result.signal is Signal.USER_ONLY  # the weak pattern goes to the person
        assert result.bundle is not None
        assert any(pattern.lstrip("- ") in item for item in result.bundle.items)
    else:
        assert report.status == "empty" and report.items == 0
        assert result.signal is Signal.EXHAUSTED


def test_user_model_confidence_threshold_is_configurable(project: Project) -> None:
    project.all_sources_ready()
    model = 'path = "_control-center/_TOM-lm"'
    project.write_config(base=BASE_TOML.replace(model, f"{model}\nconfidence_threshold = 0.95"))
    (project.profile / "patterns.json").write_text(
        '[{"text": "tidy the changelog", "confidence": 0.9}]'
    )
    result = tick(project.open())
    assert result.signal is Signal.USER_ONLY
    assert result.bundle is not None
    assert result.bundle.items == ["user model, confidence 90% (below 95%): tidy the changelog"]


def test_only_user_items_left_stop_with_one_bundle(project: Project) -> None:
    project.all_sources_ready()
    first = project.add("Pick the licence", State.USER, "decision", needs="MIT or Apache-2.0")
    second = project.add(
        "Plug in the board", State.USER, "hardware", needs="a person at the lab", priority="P1"
    )
    undecided = "Rename the project?\n\nDrop Python 3.11?\n"
    (project.decisions / "TO-DECIDE-USER.txt").write_text(undecided)
    project.add("Someday", State.PARKED, "backlog")
    result = tick(project.open())
    assert result.signal is Signal.USER_ONLY and int(result.exit_code) == 14
    assert result.bundle is not None
    assert [t.id for t in result.bundle.tickets] == [second.id, first.id]
    assert result.bundle.items == [
        "undecided (TO-DECIDE-USER.txt): Rename the project?",
        "undecided (TO-DECIDE-USER.txt): Drop Python 3.11?",
    ]
    lines = result.lines()
    block = lines[lines.index("For you, in one bundle (4 items):") :]
    assert block[-1] == result.line and len(block) == 6
    assert "needs: a person at the lab" in block[1]


def test_a_decision_naming_a_user_ticket_is_found_once(project: Project) -> None:
    project.all_sources_ready()
    ticket = project.add("Pick the licence", State.USER, "decision", needs="MIT or Apache-2.0")
    (project.decisions / "DECIDED-AND-DONE.md").write_text(f"- {ticket.id}: MIT, go ahead\n")
    loop = project.open()
    result = tick(loop)
    assert result.signal is Signal.CONTINUE
    assert result.level2 is not None and result.level2.outcome == "found"
    assert _statuses(result)["decisions.ledger"] == "found"
    assert _statuses(result)["memory.organic"] == "not asked"
    moved = loop.board.get(ticket.id)
    assert moved.state is State.ACTIONABLE and "MIT, go ahead" in moved.body
    loop.board.move(ticket.id, State.DONE)
    assert tick(loop).signal is Signal.EXHAUSTED  # the same decision is not new again


def test_new_memory_items_become_inbox_notes_once(project: Project) -> None:
    items = [{"id": "wm-1", "text": "RESUME: finish the parser port"}]
    project.all_sources_ready(curated={"status": "found", "items": items})
    loop = project.open()
    result = tick(loop)
    assert result.signal is Signal.CONTINUE
    assert result.level2 is not None
    assert result.level2.applied == [
        next(a for a in result.level2.applied if a.startswith("INBOX/memory.curated-"))
    ]
    note = loop.board.load().untriaged()[0]
    text = note.read_text()
    assert text.startswith("RESUME: finish the parser port")
    assert text.splitlines()[-1].startswith(f"session: {result.tick_id} | tether-loop@")
    assert result.tick_id is not None and result.tick_id.startswith("tick-")
    assert text.splitlines()[-1].endswith(" | 2026-03-02")
    assert tick(loop).level1.work is not None  # next tick: triage
    loop.board.move(loop.board.load().in_state(State.ACTIONABLE)[0].id, State.DONE)
    assert tick(loop).signal is Signal.EXHAUSTED  # reported before: not new


def test_a_dry_run_asks_the_sources_and_updates_the_guard_but_applies_nothing(
    project: Project,
) -> None:
    items = ["finish the parser port"]
    project.all_sources_ready(organic=items)
    loop = project.open(spy=True)
    result = tick(loop, dry_run=True)
    assert result.signal is Signal.CONTINUE and result.level2 is not None
    assert result.level2.outcome == "found" and result.level2.applied == []
    assert reads(loop)["memory.organic"] == 1
    assert loop.board.load().untriaged() == []
    assert result.level2.guard_after is not None and result.level2.guard_after.result == "found"
    real = tick(loop)  # nothing was marked seen: the real tick finds it again
    assert real.level2 is not None and real.level2.applied


def test_json_evidence_names_every_source(project: Project) -> None:
    project.all_sources_ready()
    (project.bin / "curated-memory").unlink()
    data = tick(project.open()).as_dict()
    json.dumps(data)  # serialisable
    sources = data["level2"]["sources"]
    assert [s["role"] for s in sources] == ALL_ROLES
    assert [s["located"] for s in sources] == [True, True, False, True]
    assert [s["status"] for s in sources] == ["empty", "empty", "unavailable", "empty"]
    assert sources[0]["read"] == ["_control-center/_DECISIONS/DECIDED-AND-DONE.md"]
    assert sources[1]["read"] == ["`organic-memory --json`: exit 0"]
    assert data["level2"]["guard"]["holds"] is False
    assert data["signal"] == "blind" and data["exit_code"] == 11


# --- the guard and the person's bundle -----------------------------------------


def _user_ticket(p: Project) -> str:
    p.add("Pick the licence", State.USER, "decision", needs="MIT or Apache-2.0")
    return '"Pick the licence"'


def _undecided(p: Project) -> str:
    (p.decisions / "TO-DECIDE-USER.txt").write_text("Rename the project?\n")
    return "undecided (TO-DECIDE-USER.txt): Rename the project?"


def _weak_pattern(p: Project) -> str:
    (p.profile / "patterns.md").write_text("- 🔴 On Fridays, update the changelog\n")
    return "On Fridays, update the changelog"


def _held_todo(p: Project) -> str:
    (p.root / "TODO.md").write_text("- [ ] publish the release (needs approval)\n")
    return "waits for an approval/decision: publish the release"


@pytest.mark.parametrize(
    "person_item",
    [_user_ticket, _undecided, _weak_pattern, _held_todo],
    ids=["user-ticket", "undecided-decision", "low-confidence-pattern", "held-todo"],
)
def test_a_guarded_tick_with_items_for_the_person_still_stops_user_only_with_the_bundle(
    project: Project, person_item: Any
) -> None:
    project.all_sources_ready()
    shown = person_item(project)
    loop = project.open(spy=True)
    first = tick(loop)
    assert first.signal is Signal.USER_ONLY
    counted = reads(loop)
    project.clock.advance(5 * 60)
    second = tick(loop)
    assert second.level2 is not None and second.level2.outcome == "guard"
    assert reads(loop) == counted  # the guard held: no source read again
    assert second.signal is Signal.USER_ONLY and int(second.exit_code) == 14
    assert second.bundle is not None and not second.bundle.empty
    lines = second.lines()
    assert any(shown in line for line in lines[lines.index(second.bundle.lines()[0]) :])
    assert first.bundle is not None and second.bundle.as_dict() == first.bundle.as_dict()


def test_a_guarded_blind_tick_shows_the_bundle_before_its_guard_line(project: Project) -> None:
    project.all_sources_ready()
    (project.bin / "organic-memory").unlink()
    _user_ticket(project)
    loop = project.open()
    assert tick(loop).signal is Signal.BLIND
    second = tick(loop)
    assert second.signal is Signal.GUARD_BLIND and int(second.exit_code) == 13
    lines = second.lines()
    assert lines[-1] == second.line
    assert "For you, in one bundle (1 item):" in lines
    assert '"Pick the licence"' in lines[-2]


def test_the_guard_says_exhausted_unchanged_only_when_nothing_is_left_for_the_person(
    project: Project,
) -> None:
    project.all_sources_ready()
    ticket = project.add("Pick the licence", State.USER, "decision", needs="MIT or Apache-2.0")
    loop = project.open()
    assert tick(loop).signal is Signal.USER_ONLY
    assert tick(loop).signal is Signal.USER_ONLY
    loop.board.move(ticket.id, State.DONE, note="MIT")
    assert tick(loop).signal is Signal.EXHAUSTED  # the USER ids changed: the chain ran again
    guarded = tick(loop)
    assert guarded.signal is Signal.GUARD_EXHAUSTED and guarded.bundle is None


# --- decisions that name a ticket (decisions.ledger) ----------------------------


@pytest.mark.parametrize(
    ("state", "reason", "front", "found"),
    [
        (State.BLOCKED, "dependency", {"blocked_by": "the release", "check": ["false"]}, True),
        (State.WAITING, "scheduled", {"until": "2030-01-01"}, True),
        (State.PARKED, "backlog", {}, True),
        (State.USER, "approval", {"needs": "a yes"}, True),
        (State.DONE, None, {}, False),
    ],
    ids=["blocked", "waiting", "parked", "user", "done"],
)
def test_a_decision_naming_a_ticket_that_is_not_done_is_found(
    project: Project, state: State, reason: str | None, front: dict[str, Any], found: bool
) -> None:
    project.all_sources_ready()
    ticket = project.add("Port the parser", state, reason, **front)
    where = project.location(ticket.id)
    (project.decisions / "DECIDED-AND-DONE.md").write_text(f"- {ticket.id}: approved, go ahead\n")
    loop = project.open()
    result = tick(loop)
    if not found:  # a decision about finished work is no work
        assert result.signal is Signal.EXHAUSTED
        return
    assert result.signal is Signal.CONTINUE, result.lines()
    assert _statuses(result)["decisions.ledger"] == "found"
    if state is State.USER:
        assert project.location(ticket.id) == "ACTIONABLE"
        return
    assert project.location(ticket.id) == where  # text never moves a ticket past its rule
    (note,) = loop.board.load().untriaged()
    text = note.read_text()
    assert f"{ticket.id} ({where}" in text and "approved, go ahead" in text
    assert tick(loop).level1.work is not None  # next: triage, then an agent gets the decision
    (made,) = loop.board.load().in_state(State.ACTIONABLE)
    assert ticket.id in made.title + made.body


# --- working memory in the fingerprint; working, lessons and facts -------------

_USMC = """#!{python}
# A stand-in memory CLI: prints the items kept in <store>/<subcommand>.json.
import json, pathlib, sys
store = pathlib.Path({store!r})
sub = next((a for a in sys.argv[1:] if a in ("working", "lessons", "facts")), "?")
with open(store / "calls.log", "a") as log:
    log.write(sub + "\\n")
path = store / (sub + ".json")
print(path.read_text() if path.exists() else "[]")
"""

_NO_CURATED_TABLE = BASE_TOML.split('[loop.sources."memory.curated"]')[0]


def _memory(project: Project, name: str) -> Path:
    store = project.root / "memory-store"
    store.mkdir(exist_ok=True)
    script = project.bin / name
    script.write_text(_USMC.format(python=sys.executable, store=str(store)))
    script.chmod(0o755)
    return store


# The docs' example of a curated memory behind one CLI: three commands, no `kind`.
_USMC_TABLE = """
[loop.sources."memory.curated"]
commands = [
  ["usmc", "working", "--json"], ["usmc", "lessons", "--json"], ["usmc", "facts", "--json"]
]
"""


def _usmc_curated(project: Project) -> Path:
    """memory.curated asks ``usmc`` three times, the other three sources present and empty."""
    project.all_sources_ready()
    project.write_config(base=_NO_CURATED_TABLE + _USMC_TABLE)
    return _memory(project, "usmc")


def test_curated_memory_asks_working_lessons_and_facts_as_configured(project: Project) -> None:
    store = _usmc_curated(project)
    result = tick(project.open())
    assert result.signal is Signal.EXHAUSTED, result.lines()
    asked = (store / "calls.log").read_text().split()
    assert {"working", "lessons", "facts"} <= set(asked)
    assert result.level2 is not None
    report = next(r for r in result.level2.reports if r.role == "memory.curated")
    assert report.read == [
        "`usmc working --json`: exit 0",
        "`usmc lessons --json`: exit 0",
        "`usmc facts --json`: exit 0",
    ]


@pytest.mark.parametrize("kind", ["working", "lessons", "facts"])
def test_a_new_entry_in_any_curated_memory_is_found(project: Project, kind: str) -> None:
    store = _usmc_curated(project)
    (store / f"{kind}.json").write_text(json.dumps([{"id": "m-1", "text": f"a {kind} entry"}]))
    loop = project.open()
    result = tick(loop)
    assert result.signal is Signal.CONTINUE
    assert _statuses(result)["memory.curated"] == "found"
    (note,) = loop.board.load().untriaged()
    assert note.read_text().startswith(f"a {kind} entry")


@pytest.mark.slow
@pytest.mark.parametrize("configured", ["usmc commands", "own command"])
def test_a_new_working_memory_entry_breaks_the_guard(project: Project, configured: str) -> None:
    if configured == "usmc commands":
        store = _usmc_curated(project)
    else:  # a table that names its own command: its first command counts new entries
        project.all_sources_ready()
        store = _memory(project, "curated-memory")
    (store / "working.json").write_text(json.dumps([{"id": "wm-1", "text": "old, seen"}]))
    loop = project.open(spy=True)
    done = run_loop(loop)  # wm-1 is new once: found, triaged, run; then nothing is left
    assert [t.signal for t in done.ticks][-1] is Signal.EXHAUSTED and len(done.ticks) == 4
    assert tick(loop).signal is Signal.GUARD_EXHAUSTED
    counted = reads(loop)
    (store / "working.json").write_text(
        json.dumps([{"id": "wm-1", "text": "old, seen"}, {"id": "wm-2", "text": "RESUME: docs"}])
    )
    project.clock.advance(60)  # well inside the interval
    again = tick(loop)
    assert again.level2 is not None and again.level2.guard_why == "the situation changed"
    assert again.signal is Signal.CONTINUE
    assert _statuses(again)["memory.curated"] == "found"
    assert reads(loop)["memory.curated"] == counted["memory.curated"] + 1
