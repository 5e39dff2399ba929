"""The ingest queue through the real CLI: quarantine, release, one entry per run, the end line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.outside_agents import detached, without_agent_vars

from tether.ingest.entry import HumanStopError
from tether.ingest.queue import Queue
from tether.wiki.layout import Wiki

TETHER = str(Path(sys.executable).parent / "tether")
GOLDEN = "4 more entries wait in incoming/. Next: /clear, then ingest.\n"


def _env(**extra: str) -> dict[str, str]:
    env = without_agent_vars(os.environ, "TETHER_DEPTH")
    env.update(extra)
    return env


def tether(root: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        detached([TETHER, "ingest", *args, "--root", str(root)], new_session=True),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=_env(**env),
        start_new_session=True,
    )


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    root = tmp_path / "kb"
    (root / "wiki").mkdir(parents=True)
    return root


def _sources(tmp_path: Path, n: int) -> list[Path]:
    folder = tmp_path / "downloads"
    folder.mkdir(exist_ok=True)
    out = []
    for k in range(n):
        path = folder / f"source-{k}.md"
        path.write_text(f"# Source {k}\n\nContent {k}.\n")
        out.append(path)
    return out


def _waiting(kb: Path, n: int, tmp_path: Path) -> list[str]:
    paths = _sources(tmp_path, n)
    done = tether(kb, "collect", *map(str, paths), "--json")
    assert done.returncode == 0, done.stderr
    ids = [r["id"] for r in json.loads(done.stdout)]
    assert (kb / "quarantine").is_dir() and not (kb / "incoming").exists()
    released = tether(kb, "release", *ids)
    assert released.returncode == 0, released.stderr
    return ids


@pytest.mark.slow
def test_five_waiting_next_claims_one_end_prints_the_golden_line(kb: Path, tmp_path: Path) -> None:
    ids = _waiting(kb, 5, tmp_path)
    claimed = tether(kb, "next", "--json", TETHER_SESSION_ID="s-1")
    assert claimed.returncode == 0, claimed.stderr
    entry = json.loads(claimed.stdout)
    assert entry["id"] == ids[0]  # oldest first
    assert (kb / "raw" / "source-0.md").read_text() == "# Source 0\n\nContent 0.\n"
    assert "Ingest exactly one source: source-0.md" in entry["instructions"]
    assert "tether ingest end" in entry["instructions"]
    again = json.loads(tether(kb, "next", "--json", TETHER_SESSION_ID="s-1").stdout)
    assert (again["id"], again["resumed"]) == (ids[0], True)  # one unit per run
    end = tether(kb, "end", TETHER_SESSION_ID="s-1")
    assert end.returncode == 0, end.stderr
    assert end.stdout == GOLDEN
    for k in range(1, 4):
        tether(kb, "next", TETHER_SESSION_ID=f"s-{k + 1}")
        line = tether(kb, "end", TETHER_SESSION_ID=f"s-{k + 1}").stdout
        assert line == f"{4 - k} more entries wait in incoming/. Next: /clear, then ingest.\n"
    tether(kb, "next", TETHER_SESSION_ID="s-last")
    last = tether(kb, "end", TETHER_SESSION_ID="s-last")
    assert (last.returncode, last.stdout) == (0, "")  # nothing waits: no line
    assert tether(kb, "next", TETHER_SESSION_ID="s-x").stdout == "nothing waits in incoming/\n"


@pytest.mark.slow
def test_two_concurrent_next_never_claim_the_same_entry(kb: Path, tmp_path: Path) -> None:
    queue = Queue(Wiki.open(kb))
    for path in _sources(tmp_path, 6):
        queue.collect(path)
    queue.release([e.id for e in queue.quarantined()])
    procs = [
        subprocess.Popen(
            [TETHER, "ingest", "next", "--json", "--root", str(kb)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=_env(TETHER_SESSION_ID=f"racer-{k}"),
        )
        for k in range(6)
    ]
    claimed = []
    for proc in procs:
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
        claimed.append(json.loads(out)["id"])
    assert sorted(claimed) == sorted(f"source-{k}.md" for k in range(6))  # all distinct
    owners = {
        json.loads((kb / "incoming" / ".claimed" / c / "claim.json").read_text())["owner"]
        for c in claimed
    }
    assert owners == {f"racer-{k}" for k in range(6)}


def test_bundles_end_with_their_own_line(kb: Path, tmp_path: Path) -> None:
    queue = Queue(Wiki.open(kb))
    for name in ("repo-a", "repo-b", "repo-c"):
        folder = tmp_path / name
        (folder / "docs").mkdir(parents=True)
        (folder / "docs" / "README.md").write_text(f"# {name}\n")
        queue.collect(folder)
    queue.release([e.id for e in queue.quarantined()])
    tether(kb, "next", TETHER_SESSION_ID="b1")
    assert (kb / "raw" / "repo-a" / "docs" / "README.md").is_file()
    end = tether(kb, "end", TETHER_SESSION_ID="b1")
    assert (
        end.stdout == "2 more bundles changed. Next: /clear, then update the captured "
        "repositories\n"
    )


def test_the_line_is_a_template_per_language(kb: Path, tmp_path: Path) -> None:
    ids = _waiting_lib(kb, tmp_path, 3)
    (kb / "tether.toml").write_text('[wiki]\nlanguage = "de"\n')
    cwd_run = subprocess.run(
        [TETHER, "ingest", "next"],
        cwd=kb,
        capture_output=True,
        text=True,
        env=_env(TETHER_SESSION_ID="de"),
        check=False,
    )
    assert cwd_run.returncode == 0, cwd_run.stderr
    end = subprocess.run(
        [TETHER, "ingest", "end"],
        cwd=kb,
        capture_output=True,
        text=True,
        env=_env(TETHER_SESSION_ID="de"),
        check=False,
    )
    assert end.stdout == "2 weitere Einträge warten in incoming/. Weiter: /clear, dann ingest.\n"
    assert ids


def _waiting_lib(kb: Path, tmp_path: Path, n: int) -> list[str]:
    queue = Queue(Wiki.open(kb))
    for path in _sources(tmp_path, n):
        queue.collect(path)
    return [r.id for r in queue.release([e.id for e in queue.quarantined()])]


def test_release_is_refused_inside_an_agent(kb: Path, tmp_path: Path) -> None:
    queue = Queue(Wiki.open(kb))
    queue.collect(_sources(tmp_path, 1)[0])
    done = tether(kb, "release", "source-0.md", TETHER_RUN_ID="run-x")
    assert done.returncode == 30
    assert "refused: `tether ingest release` is a human action" in done.stderr
    assert (kb / "quarantine" / "source-0.md").is_dir()  # nothing moved
    assert not (kb / "incoming").exists()


def test_collisions_stop_for_the_human_and_overwrite_nothing(kb: Path, tmp_path: Path) -> None:
    queue = Queue(Wiki.open(kb))
    first = _sources(tmp_path, 1)[0]
    queue.collect(first)
    queue.release(["source-0.md"])
    other = tmp_path / "elsewhere" / "source-0.md"
    other.parent.mkdir()
    other.write_text("different content\n")
    stop = tether(kb, "collect", str(other))
    assert stop.returncode == 41 and "already exists (incoming)" in stop.stderr
    # accept: raw/ already has another file of that name
    (kb / "raw").mkdir()
    (kb / "raw" / "source-0.md").write_text("an older capture\n")
    stop = tether(kb, "next", TETHER_SESSION_ID="c")
    assert stop.returncode == 41
    assert (
        "raw/source-0.md already exists with other content; nothing was overwritten" in stop.stderr
    )
    assert (kb / "raw" / "source-0.md").read_text() == "an older capture\n"
    assert (kb / "incoming" / "source-0.md").is_dir()  # given back, not lost
    # release: the same name waits already
    dup = tmp_path / "dup" / "source-0.md"
    dup.parent.mkdir()
    dup.write_text("yet another\n")
    (kb / "quarantine" / "source-0.md").mkdir(parents=True)
    (kb / "quarantine" / "source-0.md" / "manifest.json").write_text(
        json.dumps({"id": "source-0.md", "name": "source-0.md", "kind": "source"})
    )
    stop = tether(kb, "release", "source-0.md")
    assert stop.returncode == 41 and "already in incoming/" in stop.stderr
    assert (kb / "quarantine" / "source-0.md").is_dir()
    with pytest.raises(HumanStopError):
        queue.release(["source-0.md"])


@pytest.mark.slow
def test_entry_names_cannot_escape(kb: Path, tmp_path: Path) -> None:
    queue = Queue(Wiki.open(kb))
    queue.collect(_sources(tmp_path, 1)[0])
    outside = tmp_path / "outside-entry"
    outside.mkdir()
    (outside / "manifest.json").write_text("{}")
    (kb / "quarantine" / "link").symlink_to(outside)
    for name in ("../../etc/passwd", "/etc/passwd", "..", ".claimed", "link", "a/b"):
        done = tether(kb, "release", name)
        assert done.returncode == 2, (name, done.stderr)
        assert "resolves outside" in done.stderr
        done = tether(kb, "end", "--entry", name)
        assert done.returncode == 2, (name, done.stderr)
    assert (outside / "manifest.json").read_text() == "{}"


def test_status_hides_quarantine_names_from_an_agent(kb: Path, tmp_path: Path) -> None:
    Queue(Wiki.open(kb)).collect(_sources(tmp_path, 1)[0])
    inside = json.loads(tether(kb, "status", "--json", TETHER_RUN_ID="r").stdout)
    assert inside["quarantine"] == ["(1 not released)"]


def test_a_duplicate_is_not_collected_twice(kb: Path, tmp_path: Path) -> None:
    path = _sources(tmp_path, 1)[0]
    tether(kb, "collect", str(path))
    again = json.loads(tether(kb, "collect", str(path), "--json").stdout)
    assert again[0]["status"] == "duplicate"
    manifest = json.loads((kb / "quarantine" / "source-0.md" / "manifest.json").read_text())
    assert manifest["origin"] == str(path) and manifest["size"] == path.stat().st_size
    assert len(manifest["sha256"]) == 64 and manifest["collected_at"].endswith("Z")


def test_quarantine_is_never_indexed(kb: Path, tmp_path: Path) -> None:
    queue = Queue(Wiki.open(tmp_path / "kb"))
    (kb / "wiki").rmdir()  # a plain vault: pages from the top folder
    queue.collect(_sources(tmp_path, 1)[0])
    done = subprocess.run(
        [TETHER, "wiki", "search", "Content", "--root", str(kb), "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert json.loads(done.stdout) == []
