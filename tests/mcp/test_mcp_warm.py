"""What a long-lived `tether mcp` keeps between calls never makes an answer stale: within one
session a new page is found, an edited page is read as it is now, a new ticket is listed, an
edited tether.toml applies at the next call, and the store is seen once it exists."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests.outside_agents import without_agent_vars
from tests.support.mcp_client import StdioClient

TETHER = str(Path(sys.executable).parent / "tether")
CONFIG = """\
[loop]
board = "tickets"

[profiles.scripted]
harness = "scripted"
args = ["--format", "claude-code", "--steps", "1"]
default = true
"""


def _text(result: dict[str, object]) -> str:
    content = result["content"]
    assert isinstance(content, list)
    return "".join(str(c["text"]) for c in content)


def _until(check: object, what: str) -> None:
    """Until ``check()`` holds: the folder watch reports a change within moments; a hang guard,
    not a timing assertion."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if check():  # type: ignore[operator]
            return
        time.sleep(0.05)
    raise AssertionError(what)


def test_one_session_sees_every_change(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "tether.toml").write_text(CONFIG, encoding="utf-8")
    (project / "guide.md").write_text("# Guide\n\nHow the parser works.\n", encoding="utf-8")
    env = without_agent_vars(os.environ, "TETHER_DEPTH")
    env["TETHER_HOME"] = str(project / ".tether")
    with StdioClient([TETHER, "mcp"], cwd=project, env=env) as client:
        client.initialize()

        def search(word: str) -> list[str]:
            found = client.call("wiki_search", {"query": word})["structuredContent"]
            return [p["id"] for p in found["pages"]]

        assert search("zeppelin") == []
        (project / "airships.md").write_text("# Airships\n\nThe zeppelin.\n", encoding="utf-8")
        _until(lambda: search("zeppelin") == ["airships"], "the new page is found")
        (project / "guide.md").write_text("# Guide\n\nThe lexer now.\n", encoding="utf-8")
        _until(
            lambda: "lexer" in _text(client.call("wiki_read", {"page_id": "guide"})),
            "the edited page is read as it is now",
        )
        assert search("parser") == []
        # the board: a ticket added by the CLI meanwhile is listed
        done = subprocess.run(
            [TETHER, "board", "add", "From the shell"],
            cwd=project,
            env=env,
            check=True,
            capture_output=True,
            timeout=60,
        )
        assert done.returncode == 0
        listed = client.call("board_list", {})["structuredContent"]
        assert [t["title"] for t in listed["tickets"]] == ["From the shell"]
        # the configuration: a new cap applies at the next call
        big = "word " * 2000
        (project / "big.md").write_text(f"# Big\n\n{big}\n", encoding="utf-8")
        _until(lambda: "big" in search("word"), "the big page is found")
        whole = client.call("wiki_read", {"page_id": "big"})
        assert "answer cut" not in _text(whole)
        (project / "tether.toml").write_text(
            CONFIG + "\n[mcp]\nanswer_max_chars = 1000\n", encoding="utf-8"
        )
        cut = client.call("wiki_read", {"page_id": "big"})
        assert "answer cut at 1000 characters" in _text(cut)
        # the store: none yet (nothing was created for the look), then a run writes one
        assert not (project / ".tether" / "tether.db").exists()
        assert client.call("subagents_list", {})["isError"] is False
        ran = subprocess.run(
            [TETHER, "run", "--unit", "u", "--prompt", "go", "--json"],
            cwd=project,
            env=env,
            capture_output=True,
            timeout=120,
            check=False,
        )
        assert ran.returncode == 0, ran.stderr
        assert (project / ".tether" / "tether.db").exists()
        after = client.call("subagents_list", {})
        assert after["isError"] is False
        run_id = __import__("json").loads(ran.stdout)["id"]
        assert client.call("run_status", {"run_id": run_id})["structuredContent"]["id"] == run_id


def test_a_wait_opens_the_store_a_run_will_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """subagents_wait must see a run that starts while it waits: in a project (or a home the
    person set) it opens the store, creating it; outside any project it creates nothing."""
    from tether.cli.mcp_server.calls import _watch

    project = tmp_path / "project"
    project.mkdir()
    (project / "tether.toml").write_text(CONFIG, encoding="utf-8")
    monkeypatch.delenv("TETHER_HOME", raising=False)
    monkeypatch.chdir(project)
    surveyor, conn = _watch()
    conn.close()
    surveyor.close()
    assert (project / ".tether" / "tether.db").is_file()
    nowhere = tmp_path / "nowhere"
    nowhere.mkdir()
    monkeypatch.chdir(nowhere)
    surveyor, conn = _watch()
    conn.close()
    surveyor.close()
    assert not (nowhere / ".tether").exists()
