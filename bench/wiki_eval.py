"""Retrieval on paraphrased questions: recall in the brief's top 3 and within B.

Builds the index of the Obsidian Help vault (``shared/corpora/obsidian-help-en``
beside the repository, or ``--vault``) in a temporary tether home, then asks
``make_brief`` each question of ``bench/wiki_questions.py`` and prints, per
question, the rank of the page that answers it (``-`` when the brief does not
hold it) and the totals:

- recall@3: the page is among the brief's first three pages;
- recall within B: the page is on the brief's list at all (B = 12 by default).

It never asserts a figure.

    .venv/bin/python bench/wiki_eval.py [--vault DIR] [--budget 12] [--quiet]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the repository, for bench.*

from bench.wiki_questions import QUESTIONS  # noqa: E402

from tether.room.brief import make_brief  # noqa: E402
from tether.wiki.index import Index  # noqa: E402
from tether.wiki.layout import Wiki  # noqa: E402

VAULT = ROOT.parent / "shared" / "corpora" / "obsidian-help-en"


def evaluate(vault: Path, budget: int, home: Path) -> list[tuple[str, str, int | None]]:
    """(question, expected path, 1-based rank in the brief or None) for every question."""
    out: list[tuple[str, str, int | None]] = []
    with Index.open(Wiki.open(vault), home) as index:
        index.update()
        for question, expected in QUESTIONS.items():
            brief = make_brief(index, question, budget)
            paths = [p.path for p in brief.pages]
            rank = paths.index(expected) + 1 if expected in paths else None
            out.append((question, expected, rank))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vault", type=Path, default=VAULT)
    parser.add_argument("--budget", type=int, default=12)
    parser.add_argument("--quiet", action="store_true", help="only the totals")
    args = parser.parse_args()
    vault = args.vault.resolve()
    if not vault.is_dir():
        sys.exit(f"no vault at {vault}; give --vault DIR")
    with tempfile.TemporaryDirectory() as home:
        results = evaluate(vault, args.budget, Path(home))
    if not args.quiet:
        for question, expected, rank in results:
            shown = "-" if rank is None else str(rank)
            print(f"{shown:>3}  {question}  ->  {expected}")
    total = len(results)
    top3 = sum(1 for _, _, rank in results if rank is not None and rank <= 3)
    within = sum(1 for _, _, rank in results if rank is not None)
    print(f"questions: {total}  B = {args.budget}")
    print(f"recall@3:        {top3}/{total} = {top3 / total:.2f}")
    print(f"recall within B: {within}/{total} = {within / total:.2f}")


if __name__ == "__main__":
    main()
