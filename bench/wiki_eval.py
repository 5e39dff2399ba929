"""Retrieval on paraphrased questions: recall in the brief's top 3 and within B.

Builds the index of the Obsidian Help vault (``shared/corpora/obsidian-help-en``
beside the repository, or ``--vault``) in a temporary tether home, then asks
``make_brief`` each question of one set and prints the totals:

- recall@3: the page is among the brief's first three pages;
- recall within B: the page is on the brief's list at all (B = 12 by default);
- first: the page leads the list; mean reciprocal rank: the mean of 1 / its place
  (0 when it is not on the list). A change that moves answers within the first three
  places, or within B, shows only in these two;

for all questions, for those that share no word with the answer page's title
or aliases (found through the index, stemmed as bm25 stems), and for the set's
own ``NO_SHARED_WORDS`` subset when it has one (questions that use none of the
answer page's words, as their author judged).

Two sets:

- ``tuning`` (``bench/wiki_questions.py``): the questions the ranking is tuned
  on, ``QUESTIONS`` and the ``MORE_QUESTIONS`` written later by the tuner (each
  also totalled alone); per question, the rank of the answer page (``-``: not
  in the brief) is printed too, unless ``--quiet``;
- ``heldout`` (``bench/wiki_heldout.py``): written apart from the ranking by
  someone who does not tune it, and never looked at while tuning. Only its
  totals are ever printed: no question, no page, no rank of one question, so
  that running it cannot turn into tuning on it.

It never asserts a figure.

    .venv/bin/python bench/wiki_eval.py [--set tuning|heldout] [--vault DIR] [--budget 12]
"""

from __future__ import annotations

import argparse
import importlib
import sys
import tempfile
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the repository, for bench.*

from tether.room.brief import make_brief  # noqa: E402
from tether.wiki.index import Index, query_terms  # noqa: E402
from tether.wiki.layout import Wiki  # noqa: E402
from tether.wiki.word_search import fts_phrase  # noqa: E402

VAULT = ROOT.parent / "shared" / "corpora" / "obsidian-help-en"
# set -> (module, the names of its question -> expected path mappings)
SETS = {
    "tuning": ("bench.wiki_questions", ("QUESTIONS", "MORE_QUESTIONS")),
    "heldout": ("bench.wiki_heldout", ("HELDOUT",)),
}


@dataclass(frozen=True)
class Result:
    question: str
    expected: str
    rank: int | None  # 1-based place in the brief's page list; None: not on it
    title_words: bool  # the question shares a word with the page's title or aliases


def load_set(name: str) -> tuple[dict[str, Mapping[str, str]], Collection[str]]:
    """(mapping name -> its questions -> expected path, the set's NO_SHARED_WORDS
    questions) of set ``name``."""
    module_name, attributes = SETS[name]
    module = importlib.import_module(module_name)
    parts: dict[str, Mapping[str, str]] = {a: getattr(module, a) for a in attributes}
    no_shared: Collection[str] = getattr(module, "NO_SHARED_WORDS", ())
    return parts, no_shared


def shares_title_word(index: Index, question: str, path: str) -> bool:
    """Whether a word of ``question`` is in the title or aliases of the page at ``path``."""
    terms = query_terms(question)
    if not terms:
        return False
    match = "{title aliases} : (" + " OR ".join(fts_phrase(t) for t in terms) + ")"
    row = index.conn.execute(
        "SELECT count(*) FROM fts JOIN pages p ON p.rowid = fts.rowid"
        " WHERE fts MATCH ? AND p.path = ?",
        (match, path),
    ).fetchone()
    return bool(row[0])


def missing_pages(vault: Path, home: Path, expected: Iterable[str]) -> int:
    """How many of the ``expected`` paths are no page of ``vault`` (a mistyped answer)."""
    wanted = set(expected)
    with Index.open(Wiki.open(vault), home) as index:
        index.update()
        return len(wanted - set(index.by_paths(wanted)))


def evaluate(vault: Path, budget: int, home: Path, questions: Mapping[str, str]) -> list[Result]:
    """Every question's result against an up-to-date index of ``vault``."""
    out: list[Result] = []
    with Index.open(Wiki.open(vault), home) as index:
        index.update()
        for question, expected in questions.items():
            brief = make_brief(index, question, budget)
            paths = [p.path for p in brief.pages]
            rank = paths.index(expected) + 1 if expected in paths else None
            out.append(
                Result(question, expected, rank, shares_title_word(index, question, expected))
            )
    return out


def totals(label: str, results: list[Result], indent: str = "") -> list[str]:
    """The recall lines of ``results`` (no question named)."""
    total = len(results)
    if total == 0:
        return [f"{indent}{label}: no questions"]
    top3 = sum(1 for r in results if r.rank is not None and r.rank <= 3)
    within = sum(1 for r in results if r.rank is not None)
    first = sum(1 for r in results if r.rank == 1)
    reciprocal = sum(1 / r.rank for r in results if r.rank is not None) / total
    return [
        f"{indent}{label}: {total} questions",
        f"{indent}  recall@3:        {top3}/{total} = {top3 / total:.2f}",
        f"{indent}  recall within B: {within}/{total} = {within / total:.2f}",
        f"{indent}  first:           {first}/{total} = {first / total:.2f}",
        f"{indent}  mean reciprocal rank: {reciprocal:.3f}",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", choices=sorted(SETS), default="tuning", dest="which")
    parser.add_argument("--vault", type=Path, default=VAULT)
    parser.add_argument("--budget", type=int, default=12)
    parser.add_argument("--quiet", action="store_true", help="only the totals")
    args = parser.parse_args()
    vault = args.vault.resolve()
    if not vault.is_dir():
        sys.exit(f"no vault at {vault}; give --vault DIR")
    parts, no_shared = load_set(args.which)
    questions = {q: path for part in parts.values() for q, path in part.items()}
    with tempfile.TemporaryDirectory() as home:
        missing = missing_pages(vault, Path(home), questions.values())
        if missing:
            sys.exit(f"{missing} expected pages of the {args.which} set are not pages of {vault}")
        results = evaluate(vault, args.budget, Path(home), questions)
    if args.which == "tuning" and not args.quiet:
        for r in results:
            shown = "-" if r.rank is None else str(r.rank)
            print(f"{shown:>3}  {r.question}  ->  {r.expected}")
    lines = totals(f"{args.which} set, B = {args.budget}", results)
    if len(parts) > 1:
        for part_name, part in parts.items():
            lines += totals(part_name, [r for r in results if r.question in part], "  ")
    lines += totals(
        "no word of the page's title or aliases",
        [r for r in results if not r.title_words],
        "  ",
    )
    if no_shared:
        unknown = set(no_shared) - set(questions)
        if unknown:
            sys.exit(f"{len(unknown)} NO_SHARED_WORDS entries are not questions of the set")
        lines += totals(
            "NO_SHARED_WORDS (none of the page's words)",
            [r for r in results if r.question in no_shared],
            "  ",
        )
    print("\n".join(lines))


if __name__ == "__main__":
    main()
