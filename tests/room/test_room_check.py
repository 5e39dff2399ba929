"""`tether room check`: each broken rule is rejected with a precise message."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.room.room_support import TETHER, SharedWiki, room_question
from tests.wikigen import GenWiki

from tether.room.brief import Brief
from tether.room.room import room_data
from tether.room.state import Room
from tether.wiki.layout import Wiki


@pytest.fixture(scope="module")
def gen(shared_wiki: SharedWiki) -> GenWiki:
    return shared_wiki.gen


BriefOf = Callable[[str], Brief]


@pytest.fixture(scope="module")
def brief_of(shared_wiki: SharedWiki) -> BriefOf:
    """The brief (B = 12) about a page's word, each made once for the module.

    The checks read only the room a brief makes, never the index: one brief per
    question for the module instead of an index and a brief per test.
    """
    made: dict[str, Brief] = {}
    gen = shared_wiki.gen

    def brief(page_id: str) -> Brief:
        if page_id not in made:
            with shared_wiki.index() as index:
                made[page_id] = shared_wiki.brief(index, room_question(gen.word_of(page_id)), 12)
        return made[page_id]

    return brief


@pytest.fixture
def room(gen: GenWiki, brief_of: BriefOf, tether_home: Path) -> Room:
    """A room about concept-00004 (stale) that read two pages of its list."""
    brief = brief_of("concept-00004")
    room = Room.create(tether_home, "r1", room_data("r1", Wiki.open(gen.root), brief))
    second = brief.pages[1].id
    assert room.read_page("concept-00004").outcome == "read"
    assert room.read_page(second).outcome == "read"
    assert room.read_page(second).outcome == "reread"  # free
    assert room.read_page("hub").outcome == "refused-list"
    return room


def _check(tmp_path: Path, text: str, room: str = "r1") -> subprocess.CompletedProcess[str]:
    file = tmp_path / "conclusion.md"
    file.write_text(text)
    return subprocess.run(
        [TETHER, "room", "check", str(file), "--room", room],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _second(room: Room) -> str:
    return str(room.pages[1].id)


def test_a_good_conclusion_passes(room: Room, tmp_path: Path) -> None:
    done = _check(
        tmp_path,
        f"# Answer\n\nIt is tracked [[concept-00004]] (stale).\n\n"
        f"- It relates to [[{_second(room)}]].\n",
    )
    assert done.returncode == 0, done.stdout
    assert f"conclusion passes: 12 words, cites concept-00004, {_second(room)}" in done.stdout


def test_520_words_are_rejected(room: Room, tmp_path: Path) -> None:
    text = "word " * 516 + "[[concept-00004]] is stale here.\n"
    assert len(text.split()) == 520
    done = _check(tmp_path, text)
    assert done.returncode == 40
    assert (
        f"{tmp_path / 'conclusion.md'}: the conclusion has 520 words; at most 500 are "
        "allowed" in done.stdout
    )


def test_an_uncited_claim_is_rejected(room: Room, tmp_path: Path) -> None:
    done = _check(
        tmp_path, "Stale but cited [[concept-00004]].\n\n- The operators restart it every night.\n"
    )
    assert done.returncode == 40
    assert (
        f"{tmp_path / 'conclusion.md'}:3: claim without a [[page]] citation: "
        "'- The operators restart it every night.'"
    ) in done.stdout


def test_citing_an_unread_page_is_rejected(room: Room, tmp_path: Path) -> None:
    done = _check(tmp_path, "It is stale [[concept-00004]].\n\nThe hub explains it [[hub]].\n")
    assert done.returncode == 40
    assert (
        f"{tmp_path / 'conclusion.md'}:3: cites [[hub]], which this room did not read "
        f"(read: concept-00004, {_second(room)})"
    ) in done.stdout


def test_a_stale_page_must_be_flagged(room: Room, tmp_path: Path) -> None:
    done = _check(tmp_path, "It is tracked by the operators [[concept-00004]].\n")
    assert done.returncode == 40
    assert "cites stale page [[concept-00004]] without flagging it" in done.stdout
    flagged = _check(tmp_path, "It is tracked [[concept-00004]].\n\nstale: [[concept-00004]]\n")
    assert flagged.returncode == 0, flagged.stdout


def test_a_budget_line_without_a_budget_hit_is_rejected(room: Room, tmp_path: Path) -> None:
    done = _check(tmp_path, "It is stale [[concept-00004]].\n\nbudget reached, not read: hub\n")
    assert done.returncode == 40
    assert (
        "says the budget was reached, but the room never hit it (2 of 12 pages read" in done.stdout
    )


def test_budget_hit_requires_the_line_naming_each_refused_page(
    gen: GenWiki, brief_of: BriefOf, tether_home: Path, tmp_path: Path
) -> None:
    wiki = Wiki.open(gen.root)
    room = Room.create(tether_home, "r2", room_data("r2", wiki, brief_of("hub")))
    for page in room.pages:
        assert room.read_page(page.id).outcome == "read"
    cut = room.cut[0].id
    assert room.read_page(cut).outcome == "refused-budget"
    base = "The hub ties them together [[hub]].\n"
    missing_line = _check(tmp_path, base, "r2")
    assert missing_line.returncode == 40
    assert (
        f"the room hit its budget of 12 pages (refused: {cut}) but the conclusion has no "
        "`budget reached, not read: <list>` line"
    ) in missing_line.stdout
    wrong = _check(tmp_path, base + "\nbudget reached, not read: something-else\n", "r2")
    assert f"the budget line does not name every page the budget refused: {cut}" in wrong.stdout
    right = _check(tmp_path, base + f"\nbudget reached, not read: [[{cut}]]\n", "r2")
    assert right.returncode == 0, right.stdout
    summary = json.loads(
        subprocess.run(
            [TETHER, "room", "check", str(tmp_path / "conclusion.md"), "--room", "r2", "--json"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout
    )
    assert summary["budget_hit"] is True and summary["ok"] is True


def test_links_inside_code_are_syntax_not_citations(room: Room, tmp_path: Path) -> None:
    shows_syntax = _check(
        tmp_path,
        "Embed a PDF with `![[Document.pdf]]` in a note [[concept-00004]] (stale).\n\n"
        "```markdown\n![[Attachments]]\n```\n\n"
        "~~~\n[[never-read]]\n~~~\n",
    )
    assert shows_syntax.returncode == 0, shows_syntax.stdout
    only_code = _check(tmp_path, "Write `[[concept-00004]]` to link it.\n")
    assert only_code.returncode == 40
    assert "claim without a [[page]] citation: 'Write `[[concept-00004]]` to link it.'" in (
        only_code.stdout
    )


def test_only_page_names_are_demanded_in_the_budget_line(
    gen: GenWiki, brief_of: BriefOf, tether_home: Path, tmp_path: Path
) -> None:
    wiki = Wiki.open(gen.root)
    room = Room.create(tether_home, "r3", room_data("r3", wiki, brief_of("hub")))
    for page in room.pages:
        assert room.read_page(page.id).outcome == "read"
    assert room.read_page("../../etc/passwd").outcome == "refused-not-a-page"
    assert room.read_page("Document.pdf").outcome == "refused-not-a-page"
    cut = room.cut[0].id
    assert room.read_page(cut).outcome == "refused-budget"
    summary = room.summary()
    assert summary.refused_budget == [cut]
    assert summary.refused_not_pages == ["../../etc/passwd", "Document.pdf"]
    done = _check(
        tmp_path, f"The hub ties them together [[hub]].\n\nbudget reached, not read: {cut}\n", "r3"
    )
    assert done.returncode == 0, done.stdout


def test_a_room_id_cannot_escape(tmp_path: Path) -> None:
    file = tmp_path / "c.md"
    file.write_text("x [[y]]\n")
    done = subprocess.run(
        [TETHER, "room", "check", str(file), "--room", "../../etc"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert "resolves outside" in done.stderr
