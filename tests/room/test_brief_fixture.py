"""The brief on a generated 300-page wiki: expected pages, never more than B, stale marked."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from tests.room.room_support import SharedWiki
from tests.wikigen import GenWiki

from tether.room.brief import MATCH_CUTOFF, Brief, fused_hits, offline_signals
from tether.wiki.index import Index

Ask = Callable[[str, int], Brief]


@pytest.fixture(scope="module")
def gen(shared_wiki: SharedWiki) -> GenWiki:
    return shared_wiki.gen


@pytest.fixture(scope="module")
def index(shared_wiki: SharedWiki) -> Iterator[Index]:
    # The shared index: a brief only reads the wiki, and the pages one brief embeds
    # with the sentence model (seconds) serve every later brief, in every worker.
    with shared_wiki.index() as ix:
        yield ix


@pytest.fixture(scope="module")
def ask(shared_wiki: SharedWiki, index: Index) -> Ask:
    """``make_brief`` on the shared index (one worker at a time)."""
    return lambda question, budget: shared_wiki.brief(index, question, budget)


def _question(gen: GenWiki, page_id: str) -> str:
    return f"What is {gen.word_of(page_id)} and what does it depend on?"


@pytest.mark.slow
@pytest.mark.parametrize(
    "page_id", ["concept-00004", "concept-00100", "episode-00019", "concept-00250", "concept-00033"]
)
@pytest.mark.parametrize("budget", [12, 5])
def test_brief_picks_the_page_and_its_typed_relation_within_b(
    gen: GenWiki, ask: Ask, page_id: str, budget: int
) -> None:
    brief = ask(_question(gen, page_id), budget)
    ids = [p.id for p in brief.pages]
    assert len(ids) <= budget
    assert ids[0] == page_id and brief.pages[0].why == "match"
    relation_target = gen.pages[page_id].relations[0][1]
    assert relation_target in ids  # the typed 1-hop neighbour
    neighbour = next(p for p in brief.pages if p.id == relation_target)
    assert neighbour.why in ("neighbour", "match")
    stale = set(gen.stale)
    assert {p.id for p in brief.pages if p.stale} == stale & set(ids)  # always marked
    assert all(p.stale_reason == "source changed" for p in brief.pages if p.stale)


def test_a_hub_found_alone_is_read_directly_and_its_relations_are_only_cut(
    gen: GenWiki, ask: Ask
) -> None:
    brief = ask(f"What is {gen.word_of('hub')}?", 12)
    # the question's words find the hub alone: <= 2 pages before neighbours
    assert brief.read_directly and [p.id for p in brief.pages] == ["hub"]
    targets = {t for _, t in gen.pages["hub"].relations}
    cut = {p.id for p in brief.cut}
    assert {p.id for p in brief.cut if p.why == "neighbour"} <= targets
    assert len(targets & cut) >= 10


def test_a_hub_overflows_b_and_the_rest_is_cut(gen: GenWiki, ask: Ask) -> None:
    # B = 6: the hub's relations and the question's matches overflow it by more than the
    # CUT_SHOWN pages the cut list names
    brief = ask(_question(gen, "hub"), 6)
    assert len(brief.pages) == 6 and not brief.read_directly
    assert brief.pages[0].id == "hub"
    targets = {t for _, t in gen.pages["hub"].relations}
    # every neighbour is one of the hub's relations; anything else on the list was
    # found by the question itself
    assert {p.id for p in brief.pages if p.why == "neighbour"} <= targets
    assert all(p.why in ("match", "episode") for p in brief.pages[1:] if p.id not in targets)
    assert brief.cut_total > len(brief.cut) == 20  # CUT_SHOWN of them are named


@pytest.mark.parametrize("budget", [6, 12])
def test_the_best_matches_keep_half_of_b_against_the_neighbours(
    gen: GenWiki, shared_wiki: SharedWiki, index: Index, ask: Ask, budget: int
) -> None:
    # the hub's many typed relations rank above the weaker matches by priority, but the
    # best half of B by fused score is listed whatever its priority (in priority order)
    question = _question(gen, "hub")
    with shared_wiki.lock():
        hits, _ = fused_hits(index, question, offline_signals())
    matches = [h.page.id for h in hits if h.score >= MATCH_CUTOFF * hits[0].score]
    assert len(matches) >= 2
    brief = ask(question, budget)
    assert set(matches[: budget // 2]) <= {p.id for p in brief.pages}
    assert len(brief.pages) == budget and any(p.why == "neighbour" for p in brief.pages)
    # the rule kept it: a weaker match listed below the neighbours that outrank it
    listed = {p.id: p for p in brief.pages}
    weakest = listed[matches[min(len(matches), budget // 2) - 1]]
    assert any(p.why == "neighbour" and p.priority > weakest.priority for p in brief.pages)
    priorities = [p.priority for p in brief.pages]
    assert priorities == sorted(priorities, reverse=True)


def test_two_pages_or_fewer_are_read_directly(gen: GenWiki, ask: Ask) -> None:
    brief = ask(f"What is {gen.word_of('isolated-1')}?", 12)
    assert brief.read_directly
    assert brief.pages[0].id == "isolated-1" and len(brief.pages) <= 2
    assert all(p.why != "neighbour" for p in brief.pages)  # the rule counts what was found
    assert brief.to_dict()["read_directly"] is True


def test_a_question_whose_every_word_is_in_most_pages_still_gets_its_pages(
    index: Index, ask: Ask
) -> None:
    # the generated pages all speak of operators, latency, errors and releases: bm25
    # weighs these words at nothing and ranks no page by them; the vectors find the
    # candidates, and the words still find far more than two pages
    question = "How do operators watch latency and errors during releases?"
    assert index.only_common_words(question)
    brief = ask(question, 12)
    assert not brief.read_directly
    assert 0 < len(brief.pages) <= 12
    assert brief.pages[0].why == "match"


def test_a_common_word_beside_a_rare_one_still_counts_for_the_rule(gen: GenWiki, ask: Ask) -> None:
    # bm25 ranks by the rare word alone ("operators" is in nearly every page), yet the
    # read-directly rule counts every page the question's words find, as before
    brief = ask(f"What is {gen.word_of('isolated-1')} for the operators?", 12)
    assert not brief.read_directly
    assert brief.pages[0].id == "isolated-1"
    assert ask(f"What is {gen.word_of('isolated-1')}?", 12).read_directly


def test_no_match_means_nothing_to_read(ask: Ask) -> None:
    brief = ask("xylophonequartz", 12)
    assert brief.pages == [] and brief.read_directly
