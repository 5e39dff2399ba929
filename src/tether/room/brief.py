"""W01 + W02: the Tier-A brief and the page list fixed within the budget B.

Cheap, in the main session, before anything is read: candidates from the
index, seed episodes, the 1-hop relation neighbours of the B best matches the
question's words found, stale
flags from the wiki's stale list. Every candidate gets a priority; the best
half of B matches by fused score and then the highest priorities make the list
(matches, episodes and neighbours together never exceed B), in priority order;
the rest is the ``cut`` list. When the question finds two pages or fewer
(the pages its words find, however weakly, and the episodes, before any
neighbour) the answer is "read them directly": no room (what else the brief
found is then only in ``cut``).

Matches come from three signals fused (``fused_hits``): bm25 over title,
aliases, description, headings and body (weighted in that order); static word
vectors of the question and of every page's names, description, headings and
opening (``tether.wiki.semantic``), cheap enough for the whole wiki, so a
question in the user's own words finds a page that shares none of them; and a
sentence model (``tether.wiki.sentence``) that reads the question and those
candidates as sentences and weighs most (a page as passages, its summary and its
sections, scored by the whole and its best passage: ``tether.wiki.vectors``). A
user's embeddings endpoint (``[wiki] embeddings``, ``tether.wiki.endpoint``) takes the
place of both vector signals; when it fails, the brief uses the offline ones and says
so in its ``notes``.

Priorities: a match scores the square of its fused score relative to the best
match (1.0 for the best). A seed episode (one of the two best-matching episode pages, if it
matches at least as well as a match must) scores 0.9 times its relative bm25
score. A neighbour that is not itself a match scores half of the best match it
neighbours, times 1.0 for a typed relation (front matter ``relations:`` or
``- type [[Target]]``) and 0.6 for a plain link, times 0.6 when it is the
neighbour that links to the match (an in-link) rather than the match linking
to it, plus 0.05 for every further match it is linked with (at most 0.15), the
whole scaled down for hubs: times ``min(1, 2 / log2(2 + pages linking to
it))``. A hub — linked from at least 5 % of the pages and from 10 — is capped
below every match, and the index page is never a neighbour (it links to
everything).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from tether.core.errors import UsageError
from tether.wiki.index import Index, query_terms
from tether.wiki.index_schema import Edge, Hit, PageRow
from tether.wiki.page import BODY_LINK, EMBED
from tether.wiki.stale import stale_reasons

if TYPE_CHECKING:
    from tether.wiki.index_store import ProgressFn
    from tether.wiki.vectors import Embedder

DEFAULT_BUDGET = 12
READ_DIRECTLY_MAX = 2
# A match weaker than this share of the best match's score is noise.
MATCH_CUTOFF = 0.25
EPISODE_PRIORITY = 0.9
EPISODES = 2
NEIGHBOUR_SHARE = 0.5
PLAIN_LINK_WEIGHT = 0.6
# A neighbour that links to a match (an in-link) says less about the question than
# a page the match links to or names as a relation.
IN_LINK_WEIGHT = 0.6
# A hub (linked from at least HUB_SHARE of the pages, and from HUB_MIN_INBOUND) ranks
# below every match: it links to everything, so it says little about the question.
HUB_SHARE = 0.05
HUB_MIN_INBOUND = 10
HUB_PRIORITY = 0.5 * MATCH_CUTOFF
EXTRA_LINK_BONUS = 0.05
EXTRA_LINK_CAP = 0.15
CUT_SHOWN = 20
# Candidates: this many bm25 hits and this many pages nearest by the whole-wiki vectors.
POOL = 40
# The sentence model reads this many of them, the best by bm25 and word vectors, the
# word vectors weighing twice: bm25's candidates share the question's words already, and
# the pages it cannot find are the ones the sentence model is there for.
SENTENCE_POOL = 32
SENTENCE_POOL_NEAREST_WEIGHT = 2.0
# A candidate's score: bm25, the whole-wiki vectors and the sentence model, weighted.
BM25_SHARE = 0.2
NEAREST_SHARE = 0.1
SENTENCE_SHARE = 0.7
# A candidate bm25 did not find (no word of the question in it) is a weaker sign.
SEMANTIC_ONLY_WEIGHT = 0.7
# A match's priority is its score relative to the best match, to this power: the
# sentence model finds many pages somewhat like the question, and a weak match
# must not crowd out what the best match names as its relations.
MATCH_POWER = 2.0
# This share of B goes to the best matches by fused score, whatever their priority: the
# fused score is the brief's strongest sign, and a hub's many relations must not push
# its second- and third-best matches off the list.
MATCHES_KEPT = 0.5

MATCH = "match"
NEIGHBOUR = "neighbour"
EPISODE = "episode"


@dataclass
class BriefPage:
    id: str
    path: str  # relative to the wiki root
    page_path: str  # relative to the page folder (what links resolve to)
    title: str
    why: str  # match | neighbour | episode
    priority: float
    stale: bool = False
    stale_reason: str | None = None
    score: float | None = None  # bm25 (higher is better), for matches and episodes
    via: list[str] = field(default_factory=list)  # for neighbours: "relation <- page id"
    aliases: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["priority"] = round(self.priority, 4)
        data["score"] = None if self.score is None else round(self.score, 4)
        return data


@dataclass
class Brief:
    question: str
    budget: int
    terms: list[str]
    pages: list[BriefPage]
    cut: list[BriefPage]
    cut_total: int
    notes: list[str] = field(default_factory=list)  # e.g. why the endpoint was not used

    @property
    def read_directly(self) -> bool:
        return len(self.pages) <= READ_DIRECTLY_MAX

    @property
    def stale(self) -> list[BriefPage]:
        return [p for p in self.pages if p.stale]

    def to_dict(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "budget": self.budget,
            "terms": self.terms,
            "read_directly": self.read_directly,
            "pages": [p.to_dict() for p in self.pages],
            "stale": [p.id for p in self.stale],
            "cut": [p.to_dict() for p in self.cut],
            "cut_total": self.cut_total,
            "notes": self.notes,
        }


def _stale_reason(row: PageRow, stale: dict[str, str]) -> str | None:
    return stale.get(row.path)


def _page(
    index: Index,
    row: PageRow,
    why: str,
    priority: float,
    stale: dict[str, str],
    score: float | None = None,
) -> BriefPage:
    reason = _stale_reason(row, stale)
    return BriefPage(
        id=row.id,
        path=index.wiki.root_relative(row.path),
        page_path=row.path,
        title=row.title,
        why=why,
        priority=priority,
        stale=reason is not None,
        stale_reason=reason,
        score=score,
        aliases=list(row.aliases),
    )


@dataclass(frozen=True)
class Signals:
    """The two vector signals of a brief: one over every page, one over the candidates."""

    nearest: Embedder  # cheap enough for every page of a large wiki
    sentence: Embedder  # stronger, scores the candidates only


def offline_signals() -> Signals:
    """The offline default: wordllama's word vectors and the MiniLM sentence model."""
    from tether.wiki.semantic import WORD_VECTORS
    from tether.wiki.sentence import SENTENCE_MODEL

    return Signals(WORD_VECTORS, SENTENCE_MODEL)


def fused_hits(index: Index, question: str, signals: Signals) -> tuple[list[Hit], set[str]]:
    """The candidates for ``question``, best first, and the paths its words found.

    Candidates are the ``POOL`` best bm25 hits and the ``POOL`` pages nearest to
    the question by ``signals.nearest``; with no word of the question in the wiki
    there are none. bm25 ranks by the question's words that fewer than half the
    pages hold (``Index.search(common=False)``: it weighs the others at nothing);
    when every word is in half the pages or more, it ranks only the pages those
    words title, and every candidate counts as found by the words. The sentence model reads only the
    ``SENTENCE_POOL`` best of them by ``b + SENTENCE_POOL_NEAREST_WEIGHT * n``
    (each page it reads costs tens of milliseconds the first time); the others get
    no ``s``. A candidate's score is
    ``BM25_SHARE * b + NEAREST_SHARE * n + SENTENCE_SHARE * s``: ``b`` its bm25
    relative to the best hit (0 when bm25 does not find it), ``n`` how far its
    cosine similarity by ``signals.nearest`` lies above the wiki's mean, relative
    to the nearest page, ``s`` how far its similarity by
    ``signals.sentence`` (``Index.cosines``: by passages, the mean of the whole page's
    and the best passage's cosine) lies above the candidates' mean, relative to the most
    similar candidate; a candidate bm25 did not find counts ``SEMANTIC_ONLY_WEIGHT``
    of that.
    """
    # the sentence model reads the question on a worker thread while SQLite and the word
    # vectors find the candidates (both let go of the GIL): a brief on a large wiki waits
    # for the longer of the two, not their sum
    reading = (
        None
        if signals.sentence is signals.nearest
        else _Background(lambda: signals.sentence.embed([question])[0])
    )
    # bm25 ranks by the words fewer than half the pages hold (it weighs the others at
    # nothing, and ranking every page that holds one costs the most on a large wiki)
    hits = index.search(question, limit=POOL, common=False)
    everywhere = index.only_common_words(question)
    if not hits and not everywhere:
        return [], set()
    best = hits[0].score if hits else 0.0
    bm25 = {h.page.path: (h.score / best if best > 0 else 0.0) for h in hits}
    rows = {h.page.path: h.page for h in hits}
    asked = signals.nearest.embed([question])[0]
    near = index.nearest(signals.nearest, asked, POOL, also=bm25)
    rows.update(index.by_paths(set(near) - set(rows)))
    pool = sorted(rows)
    cheap = {p: bm25.get(p, 0.0) + SENTENCE_POOL_NEAREST_WEIGHT * near.get(p, 0.0) for p in pool}
    scored = sorted(pool, key=lambda p: (-cheap[p], p))[:SENTENCE_POOL]
    if reading is not None:
        asked = reading.result()
    sentence = _spread(index.cosines(signals.sentence, asked, scored))
    # when every word of the question is in half the pages or more, they tell no candidate
    # from another: each counts as found by them
    worded = set(pool) if everywhere else set(bm25)
    fused = [
        Hit(
            rows[path],
            (
                BM25_SHARE * bm25.get(path, 0.0)
                + NEAREST_SHARE * near.get(path, 0.0)
                + SENTENCE_SHARE * sentence.get(path, 0.0)
            )
            * (1.0 if path in worded else SEMANTIC_ONLY_WEIGHT),
        )
        for path in pool
    ]
    fused.sort(key=lambda h: (-h.score, h.page.path))
    return fused, worded


class _Background:
    """A call run on a worker thread; ``result`` waits for it (and raises what it raised)."""

    def __init__(self, call: Callable[[], Any]) -> None:
        self._call = call
        self._value: Any = None
        self._error: BaseException | None = None
        # a daemon: a brief that returns early (no candidates) does not wait for it
        self._thread = threading.Thread(target=self._run, name="tether-brief", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._value = self._call()
        except BaseException as exc:  # handed to the caller by result()
            self._error = exc

    def result(self) -> Any:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value


def _spread(values: dict[str, float]) -> dict[str, float]:
    """``values`` onto 0..1: how far each lies above their mean, relative to the highest
    (0 at or below the mean)."""
    if not values:
        return {}
    mean, high = sum(values.values()) / len(values), max(values.values())
    if high <= mean:
        return dict.fromkeys(values, 0.0)
    return {k: max(0.0, (v - mean) / (high - mean)) for k, v in values.items()}


def prepare_vectors(index: Index, progress: ProgressFn | None = None) -> tuple[int, list[str]]:
    """Every page's vectors for the brief computed now, so that no brief pays for them
    (``tether wiki index --vectors``); afterwards only pages whose file changed are
    embedded again. The endpoint's vectors when one is set (if it fails: the offline
    models', with a note), else the word vectors' and the sentence model's. Returns
    (how many pages the stronger model embedded, notes)."""
    from tether.wiki import vectors
    from tether.wiki.endpoint import EndpointError

    notes: list[str] = []
    if index.endpoint is not None:
        try:
            embedded = vectors.ensure(index.conn, index.endpoint, None, progress)
            vectors.sync(index.conn, index.endpoint)
            return embedded, notes
        except EndpointError as exc:
            notes.append(f"{exc}; the offline models' vectors were computed instead")
    signals = offline_signals()
    vectors.sync(index.conn, signals.nearest)
    return vectors.ensure(index.conn, signals.sentence, None, progress), notes


def _matches(index: Index, question: str) -> tuple[list[Hit], set[str], list[str]]:
    """``fused_hits`` by the user's endpoint if there is one, else (or when it fails) by the
    offline models; the notes say why the endpoint was not used."""
    from tether.wiki.endpoint import EndpointError

    if index.endpoint is not None:
        try:
            hits, worded = fused_hits(index, question, Signals(index.endpoint, index.endpoint))
            return hits, worded, []
        except EndpointError as exc:
            note = f"{exc}; this brief used the offline models"
            return (*fused_hits(index, question, offline_signals()), [note])
    return (*fused_hits(index, question, offline_signals()), [])


def make_brief(index: Index, question: str, budget: int = DEFAULT_BUDGET) -> Brief:
    """The brief for ``question`` from an up-to-date index; the page list holds <= budget."""
    if budget < 1:
        raise UsageError(f"the room budget must be at least 1 page, not {budget}")
    if not question.strip():
        raise UsageError("give the question the room should answer")
    stale = stale_reasons(index)
    hits, worded, notes = _matches(index, question)
    best = hits[0].score if hits else 0.0
    matches = [h for h in hits if best > 0 and h.score >= MATCH_CUTOFF * best]
    candidates: dict[str, BriefPage] = {}
    for hit in matches:
        candidates[hit.page.path] = _page(
            index, hit.page, MATCH, (hit.score / best) ** MATCH_POWER, stale, hit.score
        )
    _add_episodes(index, question, best, candidates, stale)
    # the <= 2 rule counts the pages the question's words find, however weakly (the
    # words bm25 left out too), and the episodes, before any neighbour and before pages
    # only the vectors suggest
    words_found = worded | {path for path, c in candidates.items() if c.why == EPISODE}
    if len(words_found) <= READ_DIRECTLY_MAX:
        words_found |= index.found_by_words(question, READ_DIRECTLY_MAX + 1)
    found = [c for path, c in candidates.items() if path in words_found]
    # neighbours hang on what the words found (a page only the vectors suggest is
    # a weaker sign, and its links would crowd the list)
    roots = [h for h in matches if h.page.path in worded][:budget]
    _add_neighbours(index, roots, best, candidates, stale)
    ranked = sorted(candidates.values(), key=lambda p: (-p.priority, p.id.lower()))
    if len(words_found) <= READ_DIRECTLY_MAX:
        chosen = sorted(found, key=lambda p: (-p.priority, p.id.lower()))[:budget]
    else:
        chosen = _within_budget(ranked, [candidates[h.page.path] for h in matches], budget)
    taken = {p.page_path for p in chosen}
    rest = [p for p in ranked if p.page_path not in taken]
    return Brief(
        question, budget, query_terms(question), chosen, rest[:CUT_SHOWN], len(rest), notes
    )


def _within_budget(
    ranked: list[BriefPage], matches: list[BriefPage], budget: int
) -> list[BriefPage]:
    """The ``budget`` pages of the list, in ``ranked`` order: the best
    ``MATCHES_KEPT * budget`` matches by fused score, whatever their priority, and the
    highest priorities after them."""
    kept = {p.page_path for p in matches[: int(MATCHES_KEPT * budget)]}
    rest = [p for p in ranked if p.page_path not in kept][: budget - len(kept)]
    taken = kept | {p.page_path for p in rest}
    return [p for p in ranked if p.page_path in taken]


def _add_episodes(
    index: Index,
    question: str,
    best: float,
    candidates: dict[str, BriefPage],
    stale: dict[str, str],
) -> None:
    """Seed episodes: the best-matching episode pages, if they match well enough."""
    if best <= 0:
        return
    episodes: list[Hit] = index.search(question, limit=EPISODES, kind="episode", common=False)
    for hit in episodes:
        if hit.score < MATCH_CUTOFF * best:
            continue
        priority = EPISODE_PRIORITY * min(1.0, hit.score / best)
        known = candidates.get(hit.page.path)
        if known is not None:
            known.priority = max(known.priority, priority)
            continue
        candidates[hit.page.path] = _page(index, hit.page, EPISODE, priority, stale, hit.score)


def _add_neighbours(
    index: Index,
    matches: list[Hit],
    best: float,
    candidates: dict[str, BriefPage],
    stale: dict[str, str],
) -> None:
    if not matches:
        return
    strength = {h.page.path: h.score / best for h in matches}
    paths = list(strength)
    # page -> [(parent match, relation type, typed?)]
    links: dict[str, list[tuple[str, str, bool]]] = {}
    outgoing: set[tuple[str, str]] = set()  # (neighbour, match) pairs the match links to
    for edge in index.edges_from(paths) + index.edges_to(paths):
        other, parent = _ends(edge, strength)
        if other is None or parent is None or other == parent:
            continue
        typed = edge.kind not in (BODY_LINK, EMBED)
        links.setdefault(other, []).append((parent, edge.rel_type, typed))
        if edge.src == parent:
            outgoing.add((other, parent))
    rows = index.by_paths(set(links) | set(paths))
    inbound = index.inbound_counts(links)
    total = index.page_count()
    for path, found in links.items():
        row = rows.get(path)
        if row is None or path == index.wiki.index_page:
            continue  # an attachment, or the table of contents (it links to everything)
        scores = sorted(
            (
                NEIGHBOUR_SHARE
                * strength[parent]
                * (1.0 if typed else PLAIN_LINK_WEIGHT)
                * (1.0 if (path, parent) in outgoing else IN_LINK_WEIGHT)
                for parent, _, typed in found
            ),
            reverse=True,
        )
        parents = {parent for parent, _, _ in found}
        bonus = min(EXTRA_LINK_BONUS * (len(parents) - 1), EXTRA_LINK_CAP)
        links_in = inbound.get(path, 0)
        priority = (scores[0] + bonus) * _hub_factor(links_in)
        if links_in >= max(HUB_MIN_INBOUND, HUB_SHARE * total):
            priority = min(priority, HUB_PRIORITY)  # a hub never crowds out a match
        via = sorted({f"{rel} {rows[p].id if p in rows else p}" for p, rel, _ in found})
        known = candidates.get(path)
        if known is not None:
            if known.why != MATCH:
                known.priority = max(known.priority, priority)
            continue
        page = _page(index, row, NEIGHBOUR, priority, stale)
        page.via = via[:5]
        candidates[path] = page


def _hub_factor(inbound: int) -> float:
    """Less weight for a hub (a page half the wiki links to says little about the question)."""
    return min(1.0, 2.0 / math.log2(2 + inbound))


def _ends(edge: Edge, strength: dict[str, float]) -> tuple[str | None, str | None]:
    """(the neighbour, the match it hangs on) for an edge touching a match."""
    if edge.src in strength and edge.dst is not None and edge.dst not in strength:
        return edge.dst, edge.src
    if edge.dst in strength and edge.src not in strength:
        return edge.src, edge.dst
    return None, None
