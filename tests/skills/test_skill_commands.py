"""Every command a shipped skill names runs, and prints what the skill says it prints.

The skills are read from the package; each backticked ``tether …`` command in
them must have a check below (a skill that names a new command fails until it
has one). The checks run the real CLI in a real project: a board, a generated
wiki, an ingest queue, a supervised run that the watchdog sees as a subagent.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from tests.outside_agents import without_agent_vars
from tests.room.room_support import room_question
from tests.wikigen import GenWiki, generate

from tether.skills import shipped_skills

TETHER = str(Path(sys.executable).parent / "tether")
COMMAND = re.compile(r"`(tether [^`]+)`")
SIGNAL_KEYS = {"signal", "line", "exit_code", "level1", "dispatched", "level2", "bundle"}


def named_commands() -> dict[str, set[str]]:
    """skill name -> the sub-command paths (``tether loop tick``) its text names."""
    found: dict[str, set[str]] = {}
    for skill in shipped_skills():
        text = skill.files["SKILL.md"].decode("utf-8")
        keys = set()
        for command in COMMAND.findall(" ".join(text.split())):
            words = [w for w in command.split() if not w.startswith(("-", '"', "<", "$"))]
            keys.add(" ".join(words[:3]))
        found[skill.name] = keys
    return found


@dataclass
class Project:
    root: Path
    home: Path
    wiki: GenWiki
    kb: Path

    def env(self, **extra: str) -> dict[str, str]:
        env = without_agent_vars(os.environ, "TETHER_DEPTH", "TMUX_PANE")
        env.update(TETHER_HOME=str(self.home), TETHER_WIKI_ROOT=str(self.wiki.root))
        env.update(extra)
        return env

    def run(self, command: str, **extra: str) -> subprocess.CompletedProcess[str]:
        argv = shlex.split(command)
        assert argv[0] == "tether"
        return subprocess.run(
            [TETHER, *argv[1:]],
            cwd=self.root,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            env=self.env(**extra),
            stdin=subprocess.DEVNULL,
        )


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Project:
    base = tmp_path_factory.mktemp("skills")
    root = base / "project"
    root.mkdir()
    room_args = ["--format", "claude-code", "--commands-file", str(root / "room-commands.txt")]
    (root / "tether.toml").write_text(
        'kill_grace_seconds = 0.5\n\n[loop]\nboard = "tickets"\n\n[wiki]\nroom_profile = "room"\n\n'
        '[profiles.scripted]\nharness = "scripted"\n'
        'args = ["--format", "claude-code", "--steps", "2"]\ndefault = true\n\n'
        '[profiles.sub]\nharness = "scripted"\n'
        'args = ["--format", "claude-code", "--steps", "3", "--hang-before-result", "1"]\n\n'
        f'[profiles.room]\nharness = "scripted"\nargs = {json.dumps(room_args)}\n',
        encoding="utf-8",
    )
    kb = base / "kb"
    (kb / "wiki").mkdir(parents=True)
    return Project(root, root / ".tether", generate(base / "wiki", pages=40), kb)


def _json(done: subprocess.CompletedProcess[str]) -> object:
    assert done.stdout.strip(), done.stderr
    return json.loads(done.stdout)


# --- work-loop -------------------------------------------------------------------


def check_board_list(p: Project) -> None:
    assert p.run('tether board add "Write the parser"').returncode == 0
    done = p.run("tether board list --json")
    assert done.returncode == 0, done.stderr
    data = _json(done)
    assert isinstance(data, dict)
    assert {"board", "counts", "tickets", "informal", "malformed"} <= data.keys()
    ticket = data["tickets"][0]
    assert {"id", "state", "priority", "title"} <= ticket.keys()


def check_loop_tick(p: Project) -> None:
    p.run('tether board add "Triage me"')
    done = p.run("tether loop tick --json")
    data = _json(done)
    assert isinstance(data, dict)
    assert data.keys() >= SIGNAL_KEYS
    assert data["line"].startswith("TETHER-LOOP: ")
    assert done.stderr.strip().splitlines()[-1] == data["line"]
    assert done.returncode == data["exit_code"]
    assert data["signal"] == "continue" and done.returncode == 0  # the intake gate: triage


# --- room ------------------------------------------------------------------------


def _question(p: Project) -> str:
    # finds the page and more by their words ("What is X?" alone is read directly)
    return room_question(p.wiki.word_of("hub"))


def check_room_brief(p: Project) -> None:
    data = _json(p.run(f"tether room brief {shlex.quote(_question(p))} --json"))
    assert isinstance(data, dict)
    assert {"question", "budget", "read_directly", "pages", "cut"} <= data.keys()
    assert data["budget"] == 12 and data["read_directly"] is False
    assert {"id", "path", "why", "stale"} <= data["pages"][0].keys()


def check_room_open(p: Project) -> None:
    brief = _json(p.run(f"tether room brief {shlex.quote(_question(p))} --budget 3 --json"))
    assert isinstance(brief, dict)
    first = brief["pages"][0]["id"]
    conclusion = p.root / "conclusion.md"
    conclusion.write_text(f"The answer is on its page [[{first}]].\n", encoding="utf-8")
    (p.root / "room-commands.txt").write_text(
        f"{TETHER} wiki read {first}\n{TETHER} room conclude {conclusion}\n", encoding="utf-8"
    )
    done = p.run(f"tether room open {shlex.quote(_question(p))} --budget 3 --json")
    assert done.returncode == 0, done.stderr
    data = _json(done)
    assert isinstance(data, dict)
    assert {"room", "status", "reads", "run", "check", "conclusion"} <= data.keys()
    assert {"used", "budget", "refused_budget", "missing"} <= data["reads"].keys()
    assert data["status"] == "ok" and data["reads"]["used"] == 1
    assert f"[[{first}]]" in data["conclusion"]


def check_wiki_read(p: Project) -> None:
    done = p.run("tether wiki read hub")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("---\n") and '"id": "hub"' in done.stdout


# --- watch -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def subagent(project: Project) -> Iterator[subprocess.Popen[str]]:
    """A supervised run that hangs before its result: a running subagent."""
    run = subprocess.Popen(
        [
            TETHER,
            "run",
            "--profile",
            "sub",
            "--unit",
            "sub-1",
            "--prompt",
            "work",
            "--timeout",
            "100",
        ],
        cwd=project.root,
        env=project.env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    yield run
    if run.poll() is None:
        os.killpg(run.pid, signal.SIGTERM)
        run.wait(30)


def check_add_orchestrator(p: Project) -> None:
    socket = f"tether-skills-{os.getpid()}"
    pane = subprocess.run(
        ["tmux", "-L", socket, "new-session", "-d", "-P", "-F", "#{pane_id}"],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    ).stdout.strip()
    try:
        done = p.run(
            f"tether watch add-orchestrator --tmux-pane {pane} --tmux-socket {socket} --name main"
        )
    finally:
        subprocess.run(["tmux", "-L", socket, "kill-server"], check=False, timeout=30)
    assert done.returncode == 0, done.stderr
    assert re.fullmatch(r"orchestrator \d+ \(main\) registered\n", done.stdout), done.stdout
    # outside tmux, by the agent's process: the shell a command runs in names it as $PPID
    shell = subprocess.run(
        ["sh", "-c", 'ps -o pid=,comm= -p "$PPID"'], capture_output=True, text=True, check=True
    )
    pid, comm = shell.stdout.split(maxsplit=1)
    assert int(pid) == os.getpid() and comm.strip()
    by_pid = p.run(f"tether watch add-orchestrator --pid {pid} --name main")
    assert by_pid.returncode == 0, by_pid.stderr
    assert re.fullmatch(r"orchestrator \d+ \(main\) registered\n", by_pid.stdout), by_pid.stdout


def _subagent_items(items: object) -> list[dict[str, object]]:
    assert isinstance(items, list)
    for item in items:
        assert {"key", "label", "state", "running"} <= item.keys()
    return items


def check_subagents_list(p: Project) -> None:
    deadline = time.monotonic() + 60
    while True:
        listed = _json(p.run("tether subagents list --json"))
        assert isinstance(listed, dict) and isinstance(listed["not_counted"], list)
        items = _subagent_items(listed["subagents"])
        if any(i["running"] for i in items) or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    running = [i for i in items if i["running"]]
    assert running, items
    assert all(i["state"] == "working" or str(i["state"]).startswith("waits-for-") for i in running)


def check_subagents_wait(p: Project) -> None:
    data = _json(p.run("tether subagents wait --json --timeout 1"))
    assert isinstance(data, dict)
    assert {"changed", "timed_out", "changes", "running", "orchestrator", "subagents"} <= (
        data.keys()
    )
    _subagent_items(data["subagents"])
    for change in data["changes"]:
        assert {"key", "from", "to"} <= change.keys()


# --- ingest ----------------------------------------------------------------------


def _ingest(
    p: Project, command: str, session: str = "skill-test", **env: str
) -> subprocess.CompletedProcess[str]:
    return p.run(f"{command} --root {p.kb}", TETHER_SESSION_ID=session, **env)


def _claim_one(p: Project, name: str) -> subprocess.CompletedProcess[str]:
    """A note collected, released and taken with ``ingest next`` by a session of its own
    (one unit per session): the output of ``next``."""
    source = p.kb.parent / name
    source.write_text(f"# A note\n\nOne fact of {name}.\n", encoding="utf-8")
    assert _ingest(p, f"tether ingest collect {source}").returncode == 0
    assert _ingest(p, f"tether ingest release {name}").returncode == 0
    return _ingest(p, "tether ingest next", session=name)


# Each check stands alone (the cases may run in any order, on different workers):
# what one claims, it ends.
def check_ingest_next(p: Project) -> None:
    done = _claim_one(p, "next-note.md")
    assert done.returncode == 0, done.stderr
    assert "raw/next-note.md" in done.stdout
    assert _ingest(p, "tether ingest end", session="next-note.md").returncode == 0


def check_ingest_end(p: Project) -> None:
    assert _claim_one(p, "end-note.md").returncode == 0
    done = _ingest(p, "tether ingest end", session="end-note.md")
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""  # nothing else waits: no line


def check_wiki_check(p: Project) -> None:
    done = p.run(f"tether wiki check --root {p.wiki.root}")
    assert done.returncode in (0, 40)
    assert re.search(r"^\d+ pages: \d+ violations.*, \d+ warnings$", done.stdout, re.M)


def _refused_inside_an_agent(p: Project, command: str) -> None:
    done = _ingest(p, command, TETHER_RUN_ID="r-skill")
    assert done.returncode == 30, done.stdout + done.stderr
    assert "refused" in done.stderr


def check_ingest_release(p: Project) -> None:
    _refused_inside_an_agent(p, "tether ingest release note.md")


def check_continue_here(p: Project) -> None:
    done = p.run("tether ingest continue-here", TETHER_RUN_ID="r-skill")
    assert done.returncode == 30, done.stdout + done.stderr
    assert "refused" in done.stderr


CHECKS: dict[str, Callable[[Project], None]] = {
    "tether board list": check_board_list,
    "tether loop tick": check_loop_tick,
    "tether room brief": check_room_brief,
    "tether room open": check_room_open,
    "tether wiki read": check_wiki_read,
    "tether watch add-orchestrator": check_add_orchestrator,
    "tether subagents list": check_subagents_list,
    "tether subagents wait": check_subagents_wait,
    "tether ingest next": check_ingest_next,
    "tether ingest end": check_ingest_end,
    "tether wiki check": check_wiki_check,
    "tether ingest release": check_ingest_release,
    "tether ingest continue-here": check_continue_here,
}
ORDER = list(CHECKS)


def test_every_command_a_skill_names_has_a_check() -> None:
    named = named_commands()
    assert set(named) == {"ingest", "work-loop", "room", "watch"}
    missing = {s: sorted(k - CHECKS.keys()) for s, k in named.items() if k - CHECKS.keys()}
    assert not missing, f"commands named in skills without a check: {missing}"
    assert set().union(*named.values()) == CHECKS.keys()


def test_every_skill_has_front_matter_a_harness_accepts() -> None:
    for skill in shipped_skills():
        text = skill.files["SKILL.md"].decode("utf-8")
        front = yaml.safe_load(text.split("---\n")[1])
        assert front["name"] == skill.name
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", front["name"])
        assert 0 < len(front["description"]) <= 1024
        assert len(text.splitlines()) <= 120  # short


@pytest.mark.slow
@pytest.mark.parametrize("command", ORDER)
def test_the_command_prints_what_the_skill_says(
    command: str, project: Project, subagent: subprocess.Popen[str]
) -> None:
    CHECKS[command](project)
