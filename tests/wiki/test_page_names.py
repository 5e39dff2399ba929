"""One way to read a page name: stale entries and `wiki read` accept the same forms everywhere.

Every form of a stale entry is tried on the library the three commands share (one
wiki and one index for the module: a test changes only the stale list, which every
brief and check reads anew); one form of each kind is tried through the commands
themselves, each a process that loads the brief's models.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tether.room.brief import make_brief
from tether.room.room import room_data
from tether.room.state import Room
from tether.wiki.index import Index
from tether.wiki.layout import Wiki, page_path_forms
from tether.wiki.stale import stale_pages
from tether.wiki.wiki_check import CheckResult, check

TETHER = str(Path(sys.executable).parent / "tether")
QUESTION = "What is the zeta topic?"


def _page(root: Path, rel: str, front: str, body: str) -> None:
    path = root / "wiki" / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\n{front}sources: [raw/src.md]\n---\n{body}")


def _kb(root: Path) -> Path:
    (root / "raw").mkdir(parents=True)
    (root / "raw" / "src.md").write_text("the source\n")
    _page(root, "index.md", "title: Index\n", "[[zeta]] [[hub]] [[other]]\n")
    _page(
        root,
        "concepts/zeta-topic.md",
        "id: zeta\ntitle: Zeta topic\naliases: [zeta]\n",
        "Zeta topic. [[hub]]\n",
    )
    _page(root, "concepts/hub.md", "title: Hub\n", "The hub of it all. [[zeta]]\n")
    _page(root, "concepts/other.md", "title: Other\n", "Something else. [[hub]]\n")
    (root / "secret.md").write_text("# not a page: outside the page folder\n")
    return root


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    return _kb(tmp_path / "kb")


@pytest.fixture(scope="module")
def kb_index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Index]:
    """The module's wiki and its index: the pages never change, so the vectors the
    first brief embeds serve every later one."""
    root = _kb(tmp_path_factory.mktemp("names") / "kb")
    with Index.open(Wiki.open(root), tmp_path_factory.mktemp("home")) as index:
        index.update()
        yield index


def _stale_list(index: Index, entries: list[object]) -> None:
    index.wiki.stale_path.write_text(json.dumps(entries))


def _stale_rows(index: Index) -> list[tuple[str | None, str | None]]:
    """(id, path from the wiki root) of each stale entry's page, as `wiki stale` lists it."""
    return [
        (page.id, index.wiki.root_relative(page.path)) if page else (None, None)
        for _, page in stale_pages(index)
    ]


def _checked(index: Index) -> CheckResult:
    """`wiki check`'s result: the index brought up to date first, as the command does."""
    escaped: list[str] = []
    index.update(escaped=escaped)
    return check(index, escaped)


def tether(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TETHER_ROOM")}
    return subprocess.run(
        [TETHER, *args, "--root", str(root)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=env,
    )


FORMS = [
    "zeta",  # the page id
    "concepts/zeta-topic",  # relative to the page folder
    "concepts/zeta-topic.md",
    "wiki/concepts/zeta-topic.md",  # relative to the wiki root, as `room brief --json` prints
    "wiki/concepts/zeta-topic",
    "./concepts/zeta-topic.md",
    "[[zeta|the zeta page]]",
    "Zeta topic",  # the title
]


@pytest.mark.parametrize("form", FORMS)
def test_every_form_names_the_same_page_to_brief_stale_and_check(
    kb_index: Index, form: str
) -> None:
    _stale_list(kb_index, [{"page": form, "reason": "changed"}])
    brief = make_brief(kb_index, QUESTION, 12)
    assert {p.path: p.stale for p in brief.pages}["wiki/concepts/zeta-topic.md"] is True
    assert [p.id for p in brief.stale] == ["zeta"]
    assert _stale_rows(kb_index) == [("zeta", "wiki/concepts/zeta-topic.md")]
    checked = _checked(kb_index)
    assert "stale-unknown" not in [v.kind for v in checked.violations], checked.to_dict()
    assert checked.ok, checked.to_dict()


UNKNOWN = ["wiki/concepts/nope.md", "../kb/wiki/concepts/zeta-topic.md", "/etc/passwd"]


@pytest.mark.parametrize("form", UNKNOWN)
def test_an_unknown_stale_entry_is_unknown_to_brief_stale_and_check(
    kb_index: Index, form: str
) -> None:
    _stale_list(kb_index, [form])
    assert make_brief(kb_index, QUESTION, 12).stale == []
    assert _stale_rows(kb_index) == [(None, None)]
    checked = _checked(kb_index)
    assert not checked.ok
    assert f"wiki/stale.json:1: stale-unknown: stale entry {form!r} names no page" in [
        str(v) for v in checked.violations
    ]


@pytest.mark.slow
def test_a_stale_entry_names_the_same_page_in_brief_stale_and_check(kb: Path) -> None:
    form = "wiki/concepts/zeta-topic.md"  # as `room brief --json` prints it
    (kb / "wiki" / "stale.json").write_text(json.dumps([{"page": form, "reason": "changed"}]))
    brief = json.loads(tether(kb, "room", "brief", "--json", QUESTION).stdout)
    flagged = {p["path"]: p["stale"] for p in brief["pages"]}
    assert flagged["wiki/concepts/zeta-topic.md"] is True
    assert brief["stale"] == ["zeta"]
    stale = json.loads(tether(kb, "wiki", "stale", "--json").stdout)
    assert [(s["id"], s["path"]) for s in stale] == [("zeta", "wiki/concepts/zeta-topic.md")]
    checked = tether(kb, "wiki", "check", "--json")
    kinds = [v["kind"] for v in json.loads(checked.stdout)["violations"]]
    assert "stale-unknown" not in kinds, checked.stdout
    assert checked.returncode == 0, checked.stdout


@pytest.mark.slow
def test_an_unknown_stale_entry_is_unknown_everywhere(kb: Path) -> None:
    form = "../kb/wiki/concepts/zeta-topic.md"  # the page, named from outside the page folder
    (kb / "wiki" / "stale.json").write_text(json.dumps([form]))
    brief = json.loads(tether(kb, "room", "brief", "--json", QUESTION).stdout)
    assert brief["stale"] == []
    stale = tether(kb, "wiki", "stale")
    assert "(no such page)" in stale.stdout
    checked = tether(kb, "wiki", "check")
    assert checked.returncode == 40
    assert f"wiki/stale.json:1: stale-unknown: stale entry {form!r} names no page" in checked.stdout


@pytest.mark.parametrize(
    "form", ["wiki/concepts/hub.md", "wiki/concepts/hub", "concepts/hub", "concepts/hub.md", "hub"]
)
def test_wiki_read_takes_every_path_form(kb: Path, form: str) -> None:
    done = tether(kb, "wiki", "read", form)
    assert done.returncode == 0, done.stderr
    assert "The hub of it all." in done.stdout


@pytest.mark.parametrize(
    "form",
    [
        "secret.md",
        "../secret.md",
        "wiki/../secret.md",
        "wiki/../../kb/secret.md",
        str(Path("/etc/passwd")),
    ],
)
def test_wiki_read_refuses_what_is_outside_the_page_folder(kb: Path, form: str) -> None:
    done = tether(kb, "wiki", "read", form)
    assert done.returncode == 2
    assert "no page" in done.stderr
    assert "not a page" not in done.stdout


def test_inside_a_room_the_same_forms_name_the_same_page(kb: Path, tether_home: Path) -> None:
    wiki = Wiki.open(kb)
    with Index.open(wiki, tether_home) as index:
        index.update()
        brief = make_brief(index, QUESTION, 12)
    room = Room.create(tether_home, "r1", room_data("r1", wiki, brief))
    assert room.prefix == "wiki/"
    for form in ("wiki/concepts/hub", "wiki/concepts/hub.md", "concepts/hub", "[[hub]]", "Hub"):
        entry = room.identify(form)
        assert entry is not None and entry.id == "hub", form
    for form in ("../secret.md", "/etc/passwd", "wiki/../secret"):
        assert room.identify(form) is None, form


def test_path_forms_never_leave_the_page_folder() -> None:
    assert page_path_forms("wiki/concepts/x.md", "wiki/") == ["wiki/concepts/x.md", "concepts/x.md"]
    assert page_path_forms("./concepts//x", "wiki/") == ["concepts/x"]
    for outside in ("../x", "wiki/../../x", "/etc/passwd", "concepts/../../x", ".."):
        assert page_path_forms(outside, "wiki/") == [], outside


def test_many_names_at_once_read_as_one_at_a_time(kb: Path, tether_home: Path) -> None:
    names = [*FORMS, "hub", "wiki/concepts/nope.md", "../secret.md", "secret.md", "", "HUB"]
    with Index.open(Wiki.open(kb), tether_home) as index:
        index.update()
        many = index.find_many(names)
        one = {name: index.find(name) for name in names}
    assert many == one
    assert many["wiki/concepts/zeta-topic"] is not None and many["../secret.md"] is None
