"""``tether wiki``: index, search, stale list, check and (budgeted) page reads."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from tether.core.errors import CheckFailedError, UsageError

ROOT_HELP = "The wiki folder (default: TETHER_WIKI_ROOT, [wiki] root, or the current folder)."
PROGRESS_MIN_PAGES = 500


def root_option(f: Any) -> Any:
    return click.option("--root", metavar="DIR", help=ROOT_HELP)(f)


@contextmanager
def _progress(
    enabled: bool, label: str = "indexing", min_pages: int = PROGRESS_MIN_PAGES
) -> Iterator[Any]:
    """A rich progress bar on stderr for large wikis (only on a terminal)."""
    if not enabled or not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    state: dict[str, Any] = {}
    with Progress(
        label,
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=True,
    ) as bar:

        def update(done: int, total: int) -> None:
            if total < min_pages:
                return
            if "task" not in state:
                state["task"] = bar.add_task("pages", total=total)
            bar.update(state["task"], completed=done)

        yield update


@click.group()
def wiki() -> None:
    """The wiki: Markdown pages with sources, links and a search index."""


@wiki.command("index")
@root_option
@click.option("--json", "as_json", is_flag=True, help="Print the counts as JSON.")
@click.option(
    "--vectors",
    is_flag=True,
    help="Also compute every page's vectors for `room brief` now (the sentence model "
    "costs tens of milliseconds a page, once), so that no brief waits for them.",
)
def index_cmd(root: str | None, as_json: bool, vectors: bool) -> None:
    """Build or update the search index (only changed pages are re-read).

    Pages over the size cap ([wiki] max_page_bytes, 4 MiB by default) are not
    read; they are listed, and `wiki check` reports them as too-large. Without
    --vectors, `room brief` computes the page vectors it needs as it goes and
    keeps them.
    """
    from tether.cli.wiki_context import load_context
    from tether.wiki.index_schema import describe_size

    ctx = load_context(root)
    with _progress(True) as progress:
        index, stats = ctx.fresh_index(progress)
    with index:
        embedded = _embed_pages(index) if vectors else None
        skipped = index.skipped()
        cap = index.max_page_bytes
        data = {
            "root": str(ctx.wiki.root),
            "index": str(index.path),
            "pages": stats.pages,
            "files": stats.files,
            "read": stats.parsed,
            "removed": stats.removed,
            "seconds": round(stats.seconds, 3),
            "pages_per_second": round(stats.parsed / stats.seconds, 1) if stats.parsed else None,
            "max_page_bytes": cap,
            "vectors_embedded": None if embedded is None else embedded[0],
            "vectors_seconds": None if embedded is None else round(embedded[1], 3),
            "skipped": [
                {"path": ctx.wiki.root_relative(p.path), "size": p.size, "reason": p.reason}
                for p in skipped
            ],
        }
    if as_json:
        from tether.cli.render import print_json

        print_json(data)
        return
    click.echo(
        f"indexed {stats.pages} pages ({stats.parsed} read, {stats.removed} removed) "
        f"in {stats.seconds:.2f} s"
    )
    click.echo(f"  index {index.path}")
    if embedded is not None:
        click.echo(f"embedded {embedded[0]} pages for the brief in {embedded[1]:.2f} s")
    if skipped:
        click.echo(
            f"skipped {len(skipped)} pages over the size cap of {describe_size(cap)} "
            f"([wiki] max_page_bytes); they are not indexed:"
        )
        for page in skipped:
            click.echo(f"  {ctx.wiki.root_relative(page.path)} ({describe_size(page.size)})")


def _embed_pages(index: Any) -> tuple[int, float]:
    """``prepare_vectors`` with a progress bar: (pages embedded, seconds); its notes on
    stderr."""
    import time

    from tether.room.brief import prepare_vectors

    started = time.perf_counter()
    # embedding takes tens of milliseconds a page: worth a bar sooner than reading
    with _progress(True, "embedding", min_pages=50) as progress:
        embedded, notes = prepare_vectors(index, progress)
    for note in notes:
        click.echo(f"note: {note}", err=True)
    return embedded, time.perf_counter() - started


@wiki.command("search")
@root_option
@click.argument("query")
@click.option("--limit", type=click.IntRange(min=1), default=10, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the hits as JSON.")
def search_cmd(root: str | None, query: str, limit: int, as_json: bool) -> None:
    """Full-text search (bm25): best pages first."""
    from tether.cli.wiki_context import load_context
    from tether.wiki.lookup import search_rows

    ctx = load_context(root)
    index, _ = ctx.fresh_index()
    with index:
        rows = search_rows(index, ctx.wiki, query, limit)
    if as_json:
        from tether.cli.render import print_json

        print_json([row.as_dict() for row in rows])
        return
    if not rows:
        click.echo("no page matches")
        return
    for row in rows:
        click.echo(f"{row.score:8.3f}  {row.id}  ({row.path})")


@wiki.command("stale")
@root_option
@click.option("--json", "as_json", is_flag=True, help="Print the stale list as JSON.")
def stale_cmd(root: str | None, as_json: bool) -> None:
    """Pages on the stale list (wiki/stale.json), with the reason."""
    from tether.cli.wiki_context import load_context
    from tether.wiki.stale import stale_pages

    ctx = load_context(root)
    index, _ = ctx.fresh_index()
    with index:
        rows: list[dict[str, Any]] = []
        for entry, page in stale_pages(index):
            rows.append(
                {
                    "entry": entry.page,
                    "id": page.id if page else None,
                    "path": ctx.wiki.root_relative(page.path) if page else None,
                    "reason": entry.reason,
                    "since": entry.since,
                }
            )
    if as_json:
        from tether.cli.render import print_json

        print_json(rows)
        return
    if not rows:
        click.echo("no stale pages")
        return
    for row in rows:
        where = row["path"] or "(no such page)"
        reason = f" — {row['reason']}" if row["reason"] else ""
        click.echo(f"{row['id'] or row['entry']}  {where}{reason}")


@wiki.command("check")
@root_option
@click.option(
    "--skip",
    multiple=True,
    metavar="KIND",
    help="Leave out a kind of finding (provenance, orphan, missing-file, ...).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON.")
def check_cmd(root: str | None, skip: tuple[str, ...], as_json: bool) -> None:
    """Provenance, broken links and orphans; exits 40 on violations (file:line each)."""
    from tether.cli.wiki_context import load_context
    from tether.wiki.wiki_check import KINDS, check

    unknown = [k for k in skip if k not in (*KINDS, "provenance")]
    if unknown:
        raise UsageError(
            f"unknown --skip {', '.join(unknown)}; known: provenance, {', '.join(KINDS)}"
        )
    ctx = load_context(root)
    index = ctx.index()
    with index:
        escaped: list[str] = []
        index.update(escaped=escaped)
        result = check(index, escaped, frozenset(skip))
    if as_json:
        from tether.cli.render import print_json

        print_json(result.to_dict())
    else:
        for finding in result.violations:
            click.echo(str(finding))
        for finding in result.warnings:
            click.echo(f"{finding} (warning)")
        for note in result.skipped:
            click.echo(f"skipped {note}")
        kinds: dict[str, int] = {}
        for finding in result.violations:
            kinds[finding.kind] = kinds.get(finding.kind, 0) + 1
        detail = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
        click.echo(
            f"{result.pages} pages: {len(result.violations)} violations"
            + (f" ({detail})" if detail else "")
            + f", {len(result.warnings)} warnings"
        )
    if not result.ok:
        raise CheckFailedError(f"wiki check found {len(result.violations)} violations")


def page_outside_a_room(root: str | None) -> Callable[[str], tuple[Path | None, str]]:
    """How a read finds a page when no room runs: in the wiki ``root`` resolves to."""

    def find(page_id: str) -> tuple[Path | None, str]:
        from tether.cli.wiki_context import load_context

        ctx = load_context(root)
        index, _ = ctx.fresh_index()
        with index:
            page = index.find(page_id)
            file = None if page is None else ctx.wiki.page_file(page.path)
        return file, str(ctx.wiki.root)

    return find


@wiki.command("read")
@root_option
@click.argument("page_id", metavar="ID")
def read_cmd(root: str | None, page_id: str) -> None:
    """Print one page. Inside a room it counts against the room's budget B."""
    from tether.room.pageread import read_page

    read = read_page(page_id, page_outside_a_room(root))
    note = read.room_note()
    if note is not None:
        click.echo(note, err=True)
    click.echo(read.text, nl=False)
