"""Level 1 in order, and the intake gate that blocks every STOP while INBOX is open.

(docs/reference/loop.md)
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest
from tests.loop.conftest import START, Project, reads

from tether.board import State
from tether.loop import LoopError, Signal, tick
from tether.loop.level1 import SOURCES
from tether.runs.supervisor import RunRequest, supervise


def _intake(p: Project) -> None:
    p.note("idea.txt", "Look at the flaky upload test\n")


def _actionable(p: Project) -> None:
    p.add("Fix the README typo")


def _blocked(p: Project) -> None:
    p.add("Use the new API", State.BLOCKED, "dependency", blocked_by="API release", check=["true"])


def _waiting(p: Project) -> None:
    p.add("Review the draft", State.WAITING, "scheduled", until=START.date().isoformat())


def _todo(p: Project) -> None:
    (p.root / "TODO.md").write_text("# Todo\n\n- [x] done already\n- [ ] write the docs\n")


def _routine(p: Project) -> None:
    p.write_config(p.extra_toml + '\n[[loop.routines]]\nname = "lint"\ncommand = ["true"]\n')


def _follow_up(p: Project) -> None:
    outcome = supervise(
        RunRequest(prompt="port the parser", unit="parser-port", iterations=2, cwd=p.root),
        env=p.env(),
    )
    assert outcome.stop.value == "iteration_limit"


SETUPS: dict[str, Callable[[Project], None]] = {
    "intake": _intake,
    "actionable": _actionable,
    "blocked": _blocked,
    "waiting": _waiting,
    "todo": _todo,
    "routine": _routine,
    "follow-up": _follow_up,
}


def _files(p: Project) -> dict[str, bytes]:
    return {
        str(f.relative_to(p.root)): f.read_bytes()
        for f in sorted((p.root / "tickets").rglob("*"))
        if f.is_file() and f.name != ".lock"
    }


@pytest.mark.slow
@pytest.mark.parametrize("first", SOURCES)
def test_each_level1_source_is_found_in_order(project: Project, first: str) -> None:
    """With work present for this source and every later one, this source's work is chosen."""
    assert list(SETUPS) == list(SOURCES)
    for name in SOURCES[SOURCES.index(first) :]:
        SETUPS[name](project)
    before = _files(project)
    loop = project.open(spy=True)
    result = tick(loop, dry_run=True)
    assert result.signal is Signal.CONTINUE
    assert result.level1.work is not None
    assert result.level1.work.source == first
    assert result.level2 is None and reads(loop) == dict.fromkeys(reads(loop), 0)
    reached = [e["source"] for e in result.level1.evidence if e["reached"]]
    assert reached == list(SOURCES[: SOURCES.index(first) + 1])
    assert _files(project) == before  # a dry run moves nothing


def _exhausted(p: Project) -> None:
    p.all_sources_ready()


def _blind(p: Project) -> None:
    pass


def _user_only(p: Project) -> None:
    p.all_sources_ready()
    p.add("Pick the licence", State.USER, "decision", needs="MIT or Apache-2.0")


STOPS: dict[str, tuple[Callable[[Project], None], Signal, int]] = {
    "exhausted": (_exhausted, Signal.EXHAUSTED, 1),
    "blind": (_blind, Signal.BLIND, 1),
    "user-only": (_user_only, Signal.USER_ONLY, 1),
    "guard-exhausted": (_exhausted, Signal.GUARD_EXHAUSTED, 2),
    "guard-blind": (_blind, Signal.GUARD_BLIND, 2),
}


@pytest.mark.parametrize("case", list(STOPS))
@pytest.mark.parametrize("informal", [True, False], ids=["informal-note", "inbox-ticket"])
def test_an_open_inbox_blocks_every_stop(project: Project, case: str, informal: bool) -> None:
    setup, stop, ticks = STOPS[case]
    setup(project)
    loop = project.open()
    for _ in range(ticks):
        result = tick(loop)
    assert result.signal is stop  # the STOP this board gives without INBOX
    if informal:
        project.note("call-back.txt", "Call back the customer about the invoice\n")
    else:
        project.add("Triage me", State.INBOX, priority="P1")
    dry = tick(loop, dry_run=True)
    assert dry.signal is Signal.CONTINUE and dry.line.startswith("TETHER-LOOP: CONTINUE")
    assert dry.level2 is None
    real = tick(loop)
    assert real.signal is Signal.CONTINUE
    assert real.level1.work is not None and real.level1.work.source == "intake"
    assert real.level2 is None
    assert loop.board.load().untriaged() == []
    assert [t.title for t in loop.board.load().in_state(State.ACTIONABLE)] == [
        "Call back the customer about the invoice" if informal else "Triage me"
    ]


def test_inbox_that_cannot_be_triaged_stops_with_an_error_never_a_signal(project: Project) -> None:
    project.all_sources_ready()
    project.note("broken.md", "---\ntitle: [unclosed\n---\nbody\n")
    loop = project.open()
    with pytest.raises(LoopError, match=r"INBOX is not triaged.*broken\.md.*no STOP"):
        tick(loop)


def test_a_note_tether_cannot_triage_is_an_error_not_an_endless_continue(
    project: Project,
) -> None:
    (project.root / "tickets" / "INBOX" / "scan.pdf").write_bytes(b"%PDF-1.4 \xff\xfe\x00")
    loop = project.open()
    with pytest.raises(LoopError, match=r"could not triage it: scan\.pdf: .*not UTF-8"):
        tick(loop)
    assert tick(loop, dry_run=True).signal is Signal.CONTINUE  # looking still says: triage


def test_triage_follows_the_front_matter_of_inbox_tickets(project: Project) -> None:
    project.add("Needs data", State.INBOX, needs="the CSV export")
    project.add("Later", State.INBOX, until="2026-04-01")
    project.add("After the release", State.INBOX, blocked_by="release", check=["true"])
    project.add("Plain", State.INBOX)
    loop = project.open()
    result = tick(loop)
    assert result.level1.work is not None and result.level1.work.source == "intake"
    where = {t.title: t.location for t in loop.board.load().tickets}
    assert where == {
        "Needs data": "USER/decision",
        "Later": "WAITING/scheduled",
        "After the release": "BLOCKED/dependency",
        "Plain": "ACTIONABLE",
    }


def test_actionable_goes_by_priority_then_age(project: Project) -> None:
    project.add("old P2")
    project.clock.advance(60)
    newer_p1 = project.add("new P1", priority="P1")
    project.clock.advance(60)
    project.add("newest P1", priority="P1")
    result = tick(project.open(), dry_run=True)
    assert result.level1.work is not None and result.level1.work.ticket is not None
    assert result.level1.work.ticket.id == newer_p1.id


def test_waiting_moves_to_actionable_only_when_its_date_or_marker_arrives(
    project: Project,
) -> None:
    project.all_sources_ready()
    tomorrow = (START + timedelta(days=1)).date().isoformat()
    dated = project.add("Ship it", State.WAITING, "scheduled", until=tomorrow)
    marked = project.add("After review", State.WAITING, "marker", marker="review/done.txt")
    loop = project.open()
    assert tick(loop, dry_run=True).signal is not Signal.CONTINUE  # nothing due yet
    (project.root / "review").mkdir()
    (project.root / "review" / "done.txt").write_text("ok")
    found = tick(loop, dry_run=True)
    assert found.level1.work is not None and found.level1.work.ticket is not None
    assert found.level1.work.ticket.id == marked.id
    assert "marker review/done.txt exists" in (found.level1.work.arrived or "")
    (project.root / "review" / "done.txt").unlink()
    project.clock.advance(24 * 3600)
    due = tick(loop, dry_run=True)
    assert due.level1.work is not None and due.level1.work.ticket is not None
    assert due.level1.work.ticket.id == dated.id


def test_todo_items_with_an_approval_or_decision_note_wait_for_a_person(project: Project) -> None:
    project.all_sources_ready()
    (project.root / "TODO.md").write_text(
        "- [ ] push the release tag (needs approval)\n"
        "  * [ ] Decision: which licence\n"
        "- [x] done\n"
        "1. [ ] rename the module\n"
    )
    loop = project.open()
    result = tick(loop, dry_run=True)
    work = result.level1.work
    assert work is not None and work.todo is not None
    assert (work.todo.line, work.todo.text) == (4, "rename the module")
    (project.root / "TODO.md").write_text(
        "- [ ] push the release tag (needs approval)\n  * [ ] Decision: which licence\n"
    )
    stop = tick(loop)
    assert stop.signal is Signal.USER_ONLY
    assert stop.bundle is not None
    assert stop.bundle.items == [
        "TODO.md:1 waits for an approval/decision: push the release tag (needs approval)",
        "TODO.md:2 waits for an approval/decision: Decision: which licence",
    ]


def test_routine_checks_honour_cooldown_and_lock(project: Project) -> None:
    project.all_sources_ready()
    project.write_config(
        '\n[[loop.routines]]\nname = "hygiene"\ncommand = ["true"]\ncooldown = "1h"\n'
        'lock = "locks/hygiene.lock"\n'
    )
    loop = project.open()
    first = tick(loop)
    assert first.level1.work is not None and first.level1.work.source == "routine"
    assert first.dispatched is not None and "exit 0" in first.dispatched.summary
    assert tick(loop).signal is Signal.EXHAUSTED  # cooled down: not due
    project.clock.advance(3600)
    (project.root / "locks").mkdir(exist_ok=True)
    (project.root / "locks" / "hygiene.lock").write_text("held")
    locked = tick(loop, dry_run=True)
    assert locked.level1.work is None
    routine = next(e for e in locked.level1.evidence if e["source"] == "routine")
    assert routine["routines"][0]["why"] == "locked (locks/hygiene.lock exists)"
    (project.root / "locks" / "hygiene.lock").unlink()
    due = tick(loop, dry_run=True)
    assert due.level1.work is not None and due.level1.work.source == "routine"


def test_a_failing_routine_becomes_an_inbox_note(project: Project) -> None:
    project.write_config('\n[[loop.routines]]\nname = "tests"\ncommand = ["false"]\n')
    loop = project.open()
    result = tick(loop)
    assert result.dispatched is not None and "wrote INBOX/routine-tests-" in (
        result.dispatched.summary
    )
    assert [p.name.startswith("routine-tests-") for p in loop.board.load().untriaged()] == [True]


def test_a_ticket_under_a_user_lock_is_never_worked_and_goes_to_the_person(
    project: Project,
) -> None:
    project.all_sources_ready()
    locked = project.add("Rewrite the billing code", priority="P1", user_lock="wait for Ana")
    free = project.add("Fix the README typo", priority="P3")
    project.add(
        "Use the new API",
        State.BLOCKED,
        "dependency",
        blocked_by="API",
        check=["true"],
        user_lock=True,
    )
    loop = project.open()
    first = tick(loop, dry_run=True)
    assert first.level1.work is not None and first.level1.work.ticket is not None
    assert first.level1.work.ticket.id == free.id, "the locked P1 ticket is skipped"
    assert any(locked.id in item and "wait for Ana" in item for item in first.level1.user_items)
    project.board.move(free.id, State.DONE)
    second = tick(project.open())
    # nothing autonomous is left: the locked tickets (the BLOCKED one's passing check is
    # not even run) go to the person in one bundle
    assert second.signal is Signal.USER_ONLY
    assert second.bundle is not None
    assert sum("user lock" in item for item in second.bundle.items) == 2
    assert project.board.get(locked.id).state is State.ACTIONABLE


_P7 = (
    "---\nid: T-20260301-000000007\ntitle: Looks like work\npriority: P7\n"
    "created: 2026-03-01T09:00:00Z\n---\nPort the parser.\n"
)
MALFORMED = {
    # where (under tickets/), text, what the bundle says about it
    "actionable-priority": ("ACTIONABLE/T-20260301-000000007.md", _P7, "unknown priority 'P7'"),
    "blocked-yaml": ("BLOCKED/dependency/T-1.md", "---\ntitle: [unclosed\n---\nx\n", "T-1.md"),
    "user-priority": ("USER/decision/T-20260301-000000007.md", _P7, "unknown priority 'P7'"),
    "outside-states": ("notes.md", "Port the parser\n", "not in a state folder"),
}


@pytest.mark.parametrize("case", list(MALFORMED))
@pytest.mark.parametrize("blind", [False, True], ids=["all-sources", "one-missing"])
def test_a_malformed_ticket_outside_inbox_is_put_before_the_person_never_exhausted(
    project: Project, case: str, blind: bool
) -> None:
    """A file tether cannot read may hold work: the stop proves nothing while it stands."""
    where, text, problem = MALFORMED[case]
    project.all_sources_ready()
    if blind:
        (project.bin / "organic-memory").unlink()
    path = project.root / "tickets" / where
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    loop = project.open()
    for attempt in ("chain", "guard"):
        result = tick(loop)
        expected = Signal.BLIND if blind else Signal.USER_ONLY
        if blind and attempt == "guard":
            expected = Signal.GUARD_BLIND
        assert result.signal is expected, (attempt, result.lines())
        assert result.bundle is not None
        (item,) = [i for i in result.bundle.items if f"tickets/{where}" in i]
        assert problem in item and "fix" in item.lower()
        lines = result.lines()
        assert lines[lines.index(result.bundle.lines()[0]) + 1].endswith(item)
    assert path.read_text(encoding="utf-8") == text  # reported, never lost or changed
    path.unlink()  # fixed (here: removed) by the person: the guarded chain result stands
    assert tick(loop).signal is (Signal.GUARD_BLIND if blind else Signal.GUARD_EXHAUSTED)
