"""The real Obsidian Help vault: index, check, link resolution and the room brief.

Nobody wrote this vault for tether: aliases, [[Page|text]], [[Page#Heading]],
embeds, nested folders and names with spaces. It is read-only; the index lives
in TETHER_HOME.

The briefs embed most of the vault with the sentence model (tens of milliseconds
of CPU a passage, over a thousand passages), so they all ask one index, in a home
the run's pytest-xdist workers share: a page one of them embedded is found by the
others, as it would be by a user's next brief. They ask it one at a time (its
lock), so that no two workers embed the same page at once.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.across_workers import held, shared_folder
from tests.wiki.conftest import VAULT

from tether.room.brief import make_brief
from tether.wiki.index import Index
from tether.wiki.layout import Wiki

TETHER = str(Path(sys.executable).parent / "tether")


def _tether(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([TETHER, *args], capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture(scope="session")
def shared_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The TETHER_HOME of the vault's one index in this run, shared by the workers: the
    vault is read-only, and the page vectors one brief computed serve every later one."""
    if not VAULT.is_dir():
        pytest.skip(f"the Obsidian Help vault is not at {VAULT.resolve()}")
    return shared_folder(tmp_path_factory, "obsidian-vault-home")


@pytest.fixture(scope="module")
def index(shared_home: Path) -> Iterator[Index]:
    with held(shared_home):
        ix = Index.open(Wiki.open(VAULT.resolve()), shared_home)
        ix.update()
    with ix:
        yield ix


def test_index_and_check_run_clean_of_their_own_errors(vault: Path) -> None:
    done = _tether("wiki", "index", "--root", str(vault), "--json")
    assert done.returncode == 0, done.stderr
    stats = json.loads(done.stdout)
    assert stats["pages"] == 173 and stats["read"] == 173
    again = json.loads(_tether("wiki", "index", "--root", str(vault), "--json").stdout)
    assert again["read"] == 0  # incremental: nothing changed, nothing re-read
    check = _tether("wiki", "check", "--root", str(vault), "--json")
    assert check.returncode == 40, check.stderr  # the vault really has broken links
    assert "Traceback" not in check.stderr
    result = json.loads(check.stdout)
    assert result["provenance_checked"] is False  # no raw/: not a tether wiki
    broken = sorted(
        (v["path"], v["line"]) for v in result["violations"] if v["kind"] == "broken-link"
    )
    # The vault's own demonstration links to a note "Example" that does not exist.
    assert broken == [
        ("Linking notes and files/Internal links.md", n) for n in (154, 155, 162, 163, 168, 169)
    ]
    missing = [v for v in result["violations"] if v["kind"] == "missing-file"]
    assert missing and all(not v["message"].endswith(".md'") for v in missing)  # attachments
    text = _tether("wiki", "check", "--root", str(vault)).stdout
    assert "Linking notes and files/Internal links.md:154: broken-link: [[Example]]" in text


def test_links_resolve_by_name_alias_and_path(index: Index) -> None:
    edges = {(e.src, e.line, e.raw): e for e in index.all_edges()}
    by_name = edges[
        (
            "Linking notes and files/Internal links.md",
            17,
            "[[Settings#Files and links|Files and links]]",
        )
    ]
    assert (by_name.dst, by_name.how, by_name.heading) == (
        "User interface/Settings.md",
        "name",
        "Files and links",
    )
    in_code = [
        e
        for e in index.edges_from(["Linking notes and files/Internal links.md"])
        if e.target == "Three laws of motion"
    ]
    assert in_code == []  # `[[Three laws of motion]]` sits in inline code: not a link
    resolver = index.resolver()
    alias = resolver.resolve("Obsidian Publish/Set up a custom domain")
    assert alias is not None and (alias.path, alias.how) == (
        "Obsidian Publish/Custom domains.md",
        "alias",
    )
    start = resolver.resolve("Start here")
    assert start is not None and (start.path, start.how) == ("Home.md", "alias")
    path = resolver.resolve("Obsidian Sync/Security and privacy")
    assert path is not None and (path.path, path.how) == (
        "Obsidian Sync/Security and privacy.md",
        "path",
    )
    # the same file name in two folders: the page id is the path
    assert index.find("Obsidian Sync/Security and privacy").id == (  # type: ignore[union-attr]
        "Obsidian Sync/Security and privacy"
    )
    assert index.find("Custom domains").path == (  # type: ignore[union-attr]
        "Obsidian Publish/Custom domains.md"
    )


QUESTIONS = {
    "How do I set up a custom domain for my Publish site?": "Obsidian Publish/Custom domains.md",
    "How do I embed a heading or block from another note?": (
        "Linking notes and files/Embed files.md"
    ),
    "How do I refund my Catalyst license?": "Licenses and payment/Refund policy.md",
    "Which keyboard shortcut opens the command palette?": "Plugins/Command palette.md",
    "How do I see older versions of a note with Sync?": "Obsidian Sync/Version history.md",
    "How do I create a new vault?": "Getting started/Create a vault.md",
    "How do I import notes from Evernote?": "Import notes/Import from Evernote.md",
    "How can I change the font size of the interface?": "User interface/Settings.md",
}


@pytest.mark.slow
@pytest.mark.parametrize("question", sorted(QUESTIONS))
def test_brief_puts_the_answering_page_within_b(
    index: Index, shared_home: Path, question: str
) -> None:
    with held(shared_home):
        brief = make_brief(index, question, 12)
    paths = [p.path for p in brief.pages]
    assert QUESTIONS[question] in paths
    assert len(paths) <= 12


@pytest.mark.slow  # a real vault, its candidates read by the sentence model
def test_brief_json_lists_path_reason_and_stale_flag(
    vault: Path, shared_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the shared index: what this brief embeds, the others find, and the other way round
    monkeypatch.setenv("TETHER_HOME", str(shared_home))
    with held(shared_home):
        done = _tether(
            "room",
            "brief",
            "--root",
            str(vault),
            "--json",
            "--budget",
            "6",
            "How do I import notes from Evernote?",
        )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["budget"] == 6 and len(data["pages"]) == 6
    first = data["pages"][0]
    assert first["path"] == "Import notes/Import from Evernote.md"
    assert {p["why"] for p in data["pages"]} <= {"match", "neighbour", "episode"}
    assert all(isinstance(p["stale"], bool) for p in data["pages"])
    neighbours = [p for p in data["pages"] if p["why"] == "neighbour"]
    assert all(p["via"] for p in neighbours)
