"""Subagents are found by what runs in the orchestrator's tmux session, not by their folder."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import time
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from tests.watch.watch_support import TETHER, TmuxLab, agent_argv, wait_until, write_project

from tether.watch.transcript import TranscriptReader

INTERVAL = 0.5
IDLE = 0.75
HANG = ["--format", "claude-code", "--steps", "10", "--step-delay", "0.1"]


def _project(tmp_path: Path, lab: TmuxLab, **watch: Any) -> Path:
    values: dict[str, Any] = {
        "interval": INTERVAL,
        "idle_threshold": IDLE,
        "wake_min_interval": 30,
        "confirm_after": 1.0,
        "subagents_folders": [],  # none: the session is what counts
    }
    values.update(watch)
    return write_project(tmp_path / "project", lab, tmp_path, **values)


def _tether(project: Path, *args: str) -> Any:
    done = subprocess.run(
        [TETHER, *args], cwd=project, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout) if "--json" in args else done.stdout


def _cd_and_run(lab: TmuxLab, start: Path, elsewhere: Path, args: list[str], where: str) -> str:
    """A pane opened in ``start`` whose shell does `cd elsewhere && agent …` (the normal way)."""
    elsewhere.mkdir(parents=True, exist_ok=True)
    start.mkdir(parents=True, exist_ok=True)
    log = elsewhere / "agent.jsonl"
    script = (
        f"cd {shlex.quote(str(elsewhere))} && {shlex.join(agent_argv(*args))} > "
        f"{shlex.quote(str(log))}; read -r done"
    )
    if where == "lab":
        return lab.window(start, ["bash", "-c", script])
    return lab.run(
        "new-session", "-d", "-s", where, "-c", str(start), "-P", "-F", "#{pane_id}",
        "bash", "-c", script,
    )  # fmt: skip


def _hanging(log: Path, step: str) -> bool:
    state = TranscriptReader().read(log)
    call = state.open_call if state is not None else None
    return call is not None and step in call.input and time.time() - call.since > 1.0


@pytest.mark.slow
def test_a_subagent_in_another_window_of_the_session_wakes_the_orchestrator_once(
    lab: TmuxLab, tmp_path: Path
) -> None:
    pane, recording = lab.orchestrator()
    elsewhere = tmp_path / "elsewhere"
    sub = _cd_and_run(
        lab, tmp_path / "home", elsewhere, [*HANG, "--hang-before-result", "2"], "lab"
    )
    wait_until(
        lambda: _hanging(elsewhere / "agent.jsonl", "echo step 2"),
        timeout=20,
        what="the subagent to hang on step 2's call",
    )
    project = _project(tmp_path, lab)
    _tether(project, "watch", "add-orchestrator", "--tmux-pane", pane)
    listed = _tether(project, "subagents", "list", "--json")["subagents"]
    assert [(s["key"], s["state"]) for s in listed] == [(f"pane:{sub}", "waits-for-confirmation")]
    daemon = subprocess.Popen(
        [TETHER, "watch"], cwd=project, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        (line,) = wait_until(recording.lines, timeout=15, what="the wake in the orchestrator")
        time.sleep(4 * INTERVAL)  # more cycles: still exactly one wake
        assert len(recording.lines()) == 1
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.communicate(timeout=20)
    text = line["line"]
    assert f"Subagent elsewhere (pane {sub}) waits for confirmation: Bash" in text
    assert '"command": "echo step 2"' in text
    (wake,) = _tether(project, "watch", "log", "--json")
    assert wake["channels"][0] == {"channel": "tmux", "ok": True, "detail": f"send-keys {pane}"}


@pytest.mark.slow
def test_an_agent_outside_the_scope_is_named_with_its_reason_until_it_is_added(
    lab: TmuxLab, tmp_path: Path
) -> None:
    pane, _ = lab.orchestrator()
    other = _cd_and_run(
        lab, tmp_path / "home", tmp_path / "other", ["--format", "claude-code", "--silent"], "side"
    )
    project = _project(tmp_path, lab)
    _tether(project, "watch", "add-orchestrator", "--tmux-pane", pane)

    def seen() -> str | None:
        text = str(_tether(project, "subagents", "list"))
        return text if f"in pane {other}:" in text else None

    text = wait_until(seen, timeout=20, what="the agent in the other session to be named")
    assert text.startswith("0 of 0 subagent(s) running")
    assert "seen, not counted as subagents:" in text
    assert (
        f"in pane {other}: tmux session 'side' is not the orchestrator's ('lab'; "
        f"subagents_scope = session); `tether watch add-subagent --tmux-pane {other}` counts it"
    ) in text
    once = _tether(project, "watch", "once", "--json")
    assert any(n["pane"] == other for n in once["not_counted"])
    listed_json = _tether(project, "subagents", "list", "--json")
    assert listed_json["running"] == 0 and listed_json["subagents"] == []
    (named,) = [n for n in listed_json["not_counted"] if n["pane"] == other]
    assert named["reason"].startswith("tmux session 'side' is not the orchestrator's ('lab'")
    assert f"`tether watch add-subagent --tmux-pane {other}` counts it" in named["reason"]
    assert isinstance(named["pid"], int) and named["name"]
    _tether(project, "watch", "add-subagent", "--tmux-pane", other)
    listed = _tether(project, "subagents", "list", "--json")["subagents"]
    assert [(s["key"], s["state"], s["label"]) for s in listed] == [
        (f"pane:{other}", "working", f"other (pane {other})")
    ]
    # the whole server is in scope with subagents_scope = server
    (project / "tether.toml").unlink()
    project = _project(tmp_path, lab, subagents_scope="server")
    _tether(project, "watch", "remove-subagent", "1")
    listed = _tether(project, "subagents", "list", "--json")["subagents"]
    assert [s["key"] for s in listed] == [f"pane:{other}"]


@pytest.mark.slow  # waits 3 s on purpose
def test_a_pane_whose_agent_has_not_started_is_starting_not_ended(
    lab: TmuxLab, tmp_path: Path
) -> None:
    pane, _ = lab.orchestrator()
    folder = tmp_path / "late"
    folder.mkdir()
    go = tmp_path / "go"
    os.mkfifo(go)
    agent = shlex.join(agent_argv("--format", "claude-code", "--silent"))
    late = lab.window(folder, ["bash", "-c", f"cat {shlex.quote(str(go))} > /dev/null; {agent}"])
    project = _project(tmp_path, lab, subagents_folders=[str(folder)])
    _tether(project, "watch", "add-orchestrator", "--tmux-pane", pane)
    listed = _tether(project, "subagents", "list", "--json")["subagents"]
    assert [(s["key"], s["state"]) for s in listed] == [(f"pane:{late}", "starting")]
    waiting = subprocess.Popen(
        [TETHER, "subagents", "wait", "--timeout", "30", "--json"],
        cwd=project,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={k: v for k, v in os.environ.items() if k != "TMUX_PANE"},
    )
    time.sleep(3.0)  # the wait has looked several times: "starting" alone ends nothing
    assert waiting.poll() is None
    with go.open("w") as fifo:  # now the agent starts
        fifo.write("go\n")
    out, err = waiting.communicate(timeout=60)
    assert waiting.returncode == 0, err
    result = json.loads(out)
    assert result["changes"] == [{"key": f"pane:{late}", "from": "starting", "to": "working"}]
    assert result["orchestrator"] is None  # called from no orchestrator's pane or tree


def test_a_long_tool_of_an_agent_that_never_asks_is_no_confirmation_wait(
    lab: TmuxLab, tmp_path: Path
) -> None:
    pane, _ = lab.orchestrator()
    asks = tmp_path / "asks"
    never = tmp_path / "never"
    hang = ["--steps", "10", "--step-delay", "0.1", "--hang-before-result", "2"]
    claude = _cd_and_run(lab, tmp_path / "h1", asks, ["--format", "claude-code", *hang], "lab")
    pi = _cd_and_run(lab, tmp_path / "h2", never, ["--format", "pi", *hang], "lab")
    for log in (asks / "agent.jsonl", never / "agent.jsonl"):
        wait_until(
            partial(_hanging, log, "echo step 2"),
            timeout=20,
            what=f"the subagent in {log.parent.name} to hang on step 2's call",
        )
    project = _project(tmp_path, lab)
    _tether(project, "watch", "add-orchestrator", "--tmux-pane", pane)
    listed = {s["key"]: s for s in _tether(project, "subagents", "list", "--json")["subagents"]}
    assert listed[f"pane:{claude}"]["state"] == "waits-for-confirmation"  # Bash asks there
    assert listed[f"pane:{pi}"]["state"] == "runs-a-long-tool"  # Pi has no dialogs
    text = str(_tether(project, "subagents", "list"))
    assert f"never (pane {pi}) — runs a long tool (" in text
    assert f"asks (pane {claude}) — waits for confirmation: Bash" in text


def test_which_tools_ask_follows_the_harness_and_its_mode() -> None:
    from tether.watch.permissions import asks_permission

    assert asks_permission("claude", ["claude"], "Bash")
    assert not asks_permission("claude", ["claude"], "Read")
    assert not asks_permission("claude", ["claude", "--dangerously-skip-permissions"], "Bash")
    assert not asks_permission("claude", ["claude", "--permission-mode", "acceptEdits"], "Edit")
    assert asks_permission("claude", ["claude", "--permission-mode", "acceptEdits"], "Bash")
    assert not asks_permission("pi", ["pi"], "bash")
    assert asks_permission("codex", ["codex"], "shell")
    assert not asks_permission("codex", ["codex", "-a", "never"], "shell")
    assert not asks_permission("copilot", ["copilot", "--allow-all-tools"], "bash")
    scripted = ["python", "-m", "tether.harnesses.scripted", "--format", "pi"]
    assert not asks_permission("tether.harnesses.scripted", scripted, "bash")
    assert not asks_permission("aider", ["aider"], "run")
    # Vibe 2.26.1 names its tools by runtime namespace in what it writes
    assert asks_permission("vibe", ["vibe"], "file_system.bash")
    assert asks_permission("vibe", ["vibe"], "bash")
    assert not asks_permission("vibe", ["vibe"], "file_system.read_file")
    assert not asks_permission("vibe", ["vibe", "-p", "x", "--auto-approve"], "file_system.bash")
    assert not asks_permission("vibe", ["vibe", "--yolo"], "file_system.write_file")
