"""The brief with a user's embeddings endpoint (``[wiki] embeddings``), against a real server.

The scripted model server (``tether.testing.model_server``) answers
``POST /v1/embeddings`` over real HTTP on 127.0.0.1 with vectors that count
words, and is told that the invented word "zorblax" means "quintel": only its
vectors can put the quintel page first for a question about a zorblax. Page
vectors are kept per page and per model; an endpoint that is not there, or
fails, leaves the brief to the offline models with one line that says so.
"""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tether.config import load_config
from tether.core.errors import ConfigError
from tether.room.brief import make_brief
from tether.testing.model_server import ModelServer, ScriptedEmbeddings
from tether.wiki.endpoint import Endpoint, EndpointError, _embeddings
from tether.wiki.index import Index
from tether.wiki.layout import Wiki

TETHER = str(Path(sys.executable).parent / "tether")
QUESTION = "weekly zorblax maintenance"
PAGES = {
    "Quintel care.md": "# Quintel care\n\nClean the quintel filter every week and oil the quintel"
    " hinges. Regular maintenance keeps a quintel running.\n",
    "Boat maintenance.md": "# Boat maintenance\n\nScrape the hull, check the engine oil and"
    " replace the anodes. Regular maintenance keeps a boat afloat.\n",
    "Garden maintenance.md": "# Garden maintenance\n\nMow the lawn, prune the roses and rake"
    " the leaves. Maintenance of a garden never ends.\n",
    "Bicycle maintenance.md": "# Bicycle maintenance\n\nPump the tyres, grease the chain and"
    " true the wheels; maintenance before every long ride.\n",
    "Kitchen.md": "# Kitchen\n\nPots, pans and a kettle.\n",
}


@pytest.fixture
def wiki_root(tmp_path: Path) -> Path:
    root = tmp_path / "notes"
    root.mkdir()
    for name, text in PAGES.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def server() -> Iterator[ModelServer]:
    with ModelServer(embeddings=ScriptedEmbeddings({"zorblax": "quintel"})) as running:
        yield running


def _index(root: Path, home: Path, endpoint: Endpoint | None) -> Index:
    index = Index.open(Wiki.open(root), home, endpoint=endpoint)
    index.update()
    return index


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_the_endpoints_vectors_rank_and_are_kept_per_page_and_per_model(
    wiki_root: Path, tether_home: Path, server: ModelServer
) -> None:
    endpoint = Endpoint(f"{server.base_url}/v1", "words-1")
    with _index(wiki_root, tether_home, endpoint) as index:
        brief = make_brief(index, QUESTION, 12)
        assert brief.notes == []
        assert brief.pages[0].title == "Quintel care"
        first = server.embeddings.embedded("words-1")
        assert len(first) == len(PAGES) + 1 and QUESTION in first

        # the same question again: only the question is embedded, the pages are kept
        make_brief(index, QUESTION, 12)
        assert server.embeddings.embedded("words-1")[len(first) :] == [QUESTION]

        # one page changes: only that page (and the question) is embedded again
        (wiki_root / "Boat maintenance.md").write_text(
            "# Boat maintenance\n\nVarnish the deck.\n", encoding="utf-8"
        )
        index.update()
        before = len(server.embeddings.embedded("words-1"))
        make_brief(index, QUESTION, 12)
        again = server.embeddings.embedded("words-1")[before:]
        assert len(again) == 2 and QUESTION in again
        assert any(text.startswith("Boat maintenance") and "Varnish" in text for text in again)

    # another model: its own vectors, the first model's stay
    with _index(wiki_root, tether_home, Endpoint(f"{server.base_url}/v1", "words-2")) as index:
        assert make_brief(index, QUESTION, 12).notes == []
        assert len(server.embeddings.embedded("words-2")) == len(PAGES) + 1
        kept = dict(
            index.conn.execute(
                "SELECT model, count(*) FROM vectors WHERE model LIKE 'endpoint:%' GROUP BY model"
            ).fetchall()
        )
        assert kept == {"endpoint:words-1": len(PAGES), "endpoint:words-2": len(PAGES)}


def test_an_absent_endpoint_leaves_the_brief_to_the_offline_models_with_one_line(
    wiki_root: Path, tether_home: Path
) -> None:
    offline = make_brief(_index(wiki_root, tether_home / "a", None), QUESTION, 12)
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    with _index(wiki_root, tether_home / "b", Endpoint(url, "words-1")) as index:
        brief = make_brief(index, QUESTION, 12)
    assert [p.path for p in brief.pages] == [p.path for p in offline.pages]
    assert len(brief.notes) == 1
    note = brief.notes[0]
    assert "\n" not in note
    assert f"{url}/embeddings" in note and "not reachable" in note
    assert note.endswith("this brief used the offline models")


def test_a_failing_endpoint_is_named_with_its_status(
    wiki_root: Path, tether_home: Path, server: ModelServer
) -> None:
    server.embeddings.fail_with = 500
    endpoint = Endpoint(f"{server.base_url}/v1/embeddings", "words-1")
    with _index(wiki_root, tether_home, endpoint) as index:
        brief = make_brief(index, QUESTION, 12)
    assert brief.pages and len(brief.notes) == 1
    assert "answered HTTP 500" in brief.notes[0]
    # the server came back: the next brief uses it again
    server.embeddings.fail_with = None
    with _index(wiki_root, tether_home, endpoint) as index:
        assert make_brief(index, QUESTION, 12).notes == []


def test_a_key_is_read_from_the_named_variable_only(monkeypatch: pytest.MonkeyPatch) -> None:
    endpoint = Endpoint("http://127.0.0.1:9/v1", "m", key_env="TETHER_TEST_EMBEDDINGS_KEY")
    monkeypatch.delenv("TETHER_TEST_EMBEDDINGS_KEY", raising=False)
    with pytest.raises(EndpointError, match="TETHER_TEST_EMBEDDINGS_KEY is not set"):
        endpoint.embed(["a text"])


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        ({"data": []}, "answered 0 vectors for 2 texts"),
        ({"nothing": 1}, "answered no vectors for 2 texts"),
        ({"data": [{"embedding": [1.0]}, {"embedding": "no"}]}, "not a list"),
        ({"data": [{"embedding": [1.0]}, {"embedding": [1.0, 2.0]}]}, "different lengths"),
        ({"data": [{"index": 1, "embedding": [1.0]}, {"index": 1, "embedding": [2.0]}]}, "diff"),
    ],
)
def test_an_answer_of_the_wrong_shape_is_refused(answer: object, problem: str) -> None:
    with pytest.raises(EndpointError, match=problem):
        _embeddings(answer, 2)


def _project(tmp_path: Path, wiki_root: Path, url: str) -> Path:
    project = tmp_path / "project"
    project.mkdir(parents=True)
    (project / "tether.toml").write_text(
        f'[wiki]\nroot = "{wiki_root}"\nembeddings = {{ url = "{url}", model = "words-1" }}\n',
        encoding="utf-8",
    )
    return project


def test_the_command_prints_the_fallback_line_on_stderr(
    tmp_path: Path, wiki_root: Path, server: ModelServer
) -> None:
    dead = _project(tmp_path / "dead", wiki_root, f"http://127.0.0.1:{_closed_port()}/v1")
    done = subprocess.run(
        [TETHER, "room", "brief", QUESTION], cwd=dead, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "room brief:" in done.stdout
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("note: the embeddings endpoint http://")

    live = _project(tmp_path / "live", wiki_root, f"{server.base_url}/v1")
    done = subprocess.run(
        [TETHER, "room", "brief", QUESTION], cwd=live, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0 and done.stderr == ""
    assert "Quintel care" in done.stdout.splitlines()[1]
    assert QUESTION in server.embeddings.embedded("words-1")


def test_an_embeddings_setting_that_is_no_http_url_is_refused(tmp_path: Path) -> None:
    (tmp_path / "tether.toml").write_text(
        '[wiki]\nembeddings = { url = "file:///etc/passwd", model = "m" }\n', encoding="utf-8"
    )
    with pytest.raises(ConfigError, match=r"wiki\.embeddings"):
        load_config(env={}, cwd=tmp_path)
