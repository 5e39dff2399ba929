"""Wake endpoints inside a harness: the Claude Code rewake hook and the Pi extension file."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from tests import agent_clis
from tests.watch.watch_support import TETHER, TmuxLab, wait_until

from tether.clock import FakeClock
from tether.config.schema import WatchSettings
from tether.watch.daemon import Watchdog
from tether.watch.endpoints import live_endpoints, read_ack, write_endpoint, write_request
from tether.watch.pi_wake_extension import MARKER, render
from tether.watch.registry import Registration, add_orchestrator, list_orchestrators, list_wakes
from tether.watch.rewake import merge_settings

STOP = {"hook_event_name": "Stop", "session_id": "claude-1", "stop_hook_active": False}


def _rewake(tmp_path: Path, payload: dict[str, object]) -> subprocess.Popen[str]:
    """``tether watch rewake`` under a shell standing in for Claude Code."""
    (tmp_path / "stop.json").write_text(json.dumps({**payload, "cwd": str(tmp_path)}))
    return subprocess.Popen(
        ["bash", "-c", f"{TETHER} watch rewake < {tmp_path / 'stop.json'}; echo exit=$? >&2"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_rewake_hook_exits_2_with_the_message_when_asked(tether_home: Path, tmp_path: Path) -> None:
    hook = _rewake(tmp_path, STOP)
    (endpoint,) = wait_until(lambda: live_endpoints(tether_home), what="the hook to announce")
    assert (endpoint.kind, endpoint.session_id, endpoint.agent_pid) == (
        "claude-code",
        "claude-1",
        hook.pid,
    )
    assert endpoint.last_activity is not None and endpoint.idle is None
    write_request(tether_home, endpoint.key, "w-1", "[tether watch] wake up", time.time())
    _, err = hook.communicate(timeout=20)
    assert err.splitlines() == ["[tether watch] wake up", "exit=2"]
    ack = read_ack(tether_home, "w-1")
    assert ack is not None and ack.how == "asyncRewake exit 2"
    assert live_endpoints(tether_home) == []


def test_a_newer_rewake_hook_of_the_session_takes_over(tether_home: Path, tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    older = _rewake(tmp_path / "a", STOP)
    wait_until(lambda: len(live_endpoints(tether_home)) == 1, what="the first hook")
    (tmp_path / "b").mkdir()
    newer = _rewake(tmp_path / "b", STOP)
    _, err = older.communicate(timeout=20)
    assert err.strip() == "exit=0"  # quietly gone: no wake
    (left,) = wait_until(lambda: live_endpoints(tether_home), what="the newer hook alone")
    assert left.pid != older.pid
    newer.terminate()
    newer.communicate(timeout=20)


def test_the_daemon_wakes_through_the_rewake_hook_before_tmux(
    lab: TmuxLab, subagents_dir: Path, tether_home: Path, conn: sqlite3.Connection, tmp_path: Path
) -> None:
    _, recording = lab.orchestrator()
    lab.subagent(subagents_dir / "a", ["--format", "claude-code", "--silent"])
    hook = _rewake(tmp_path, STOP)
    wait_until(lambda: live_endpoints(tether_home), what="the hook")
    clock = FakeClock(start=datetime.now(UTC))
    # the orchestrator is the process the hook runs under (the shell standing in for claude)
    orch = add_orchestrator(conn, Registration(pid=hook.pid), clock=clock)
    settings = WatchSettings(subagents_folders=[str(subagents_dir)], tmux_socket=lab.socket)
    dog = Watchdog(settings, tether_home, conn, clock=clock)
    wait_until(lambda: dog.check().running == 1, what="the subagent")
    clock.advance(50)
    report = dog.check()
    # written, not yet taken: not "woken" until the hook acknowledges it
    assert report.decisions[0].action == "requested"
    (wake,) = report.wakes
    assert wake.channels[0]["channel"] == "harness" and wake.channels[0]["ok"]
    assert (wake.delivered, wake.outcome) == (False, "written, not acknowledged")
    _, err = hook.communicate(timeout=20)
    assert err.splitlines()[0].startswith("[tether watch] You have been idle for 50 s")
    assert err.splitlines()[-1] == "exit=2"
    assert recording.lines() == []  # the harness channel came first; nothing typed
    dog.check()  # the next cycle finds the acknowledgement
    dog.close()
    settled = list_wakes(conn)[0]
    assert (settled.delivered, settled.outcome) == (True, "woken")
    # the hook's session was bound to the orchestrator on the way
    (bound,) = [o for o in list_orchestrators(conn) if o.id == orch.id]
    assert bound.sessions == ("claude-1",)
    logged = subprocess.run(
        [TETHER, "watch", "log", "--json"],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
        cwd=tmp_path,
    )
    (entry,) = json.loads(logged.stdout)
    assert entry["channels"][0]["acknowledged_at"] is not None
    assert entry["outcome"] == "woken"


def test_claude_hook_settings_merge_keeps_other_hooks(tmp_path: Path) -> None:
    theirs: dict[str, Any] = {
        "hooks": {
            "Stop": [{"hooks": [{"type": "command", "command": "say done"}]}],
            "PreToolUse": [
                {
                    "matcher": "*",
                    "hooks": [{"type": "command", "command": "/x/tether-gate hook --harness c"}],
                }
            ],
        },
        "model": "opus",
    }
    merged = merge_settings(theirs, ["/venv/bin/tether"])
    assert (
        merged["model"] == "opus" and merged["hooks"]["PreToolUse"] == theirs["hooks"]["PreToolUse"]
    )
    assert merged["hooks"]["Stop"] == [
        {"hooks": [{"type": "command", "command": "say done"}]},
        {
            "hooks": [
                {"type": "command", "command": "/venv/bin/tether watch rewake", "asyncRewake": True}
            ]
        },
    ]
    assert merge_settings(merged, ["/venv/bin/tether"]) == merged  # idempotent
    assert merge_settings(merged, None) == theirs  # uninstall: only ours goes
    project = tmp_path / "p"
    project.mkdir()
    for flag in ("--install", "--uninstall"):
        subprocess.run(
            [TETHER, "watch", "claude-hook", flag, "--project-dir", str(project)],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        )
    assert json.loads((project / ".claude" / "settings.json").read_text()) == {}


def test_pi_extension_is_rendered_and_installed_beside_the_gate_extension(tmp_path: Path) -> None:
    text = render(home=Path("/srv/tether-home"))
    assert MARKER in text and "pi.sendUserMessage(text)" in text
    assert 'deliverAs: "followUp"' in text
    assert 'const BAKED_HOME: string | null = "/srv/tether-home";' in text
    project = tmp_path / "p"
    project.mkdir()
    done = subprocess.run(
        [TETHER, "watch", "pi-extension", "--install", "--project-dir", str(project)],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    target = project / ".pi" / "extensions" / "tether-watch.ts"
    assert done.stdout.startswith(f"wrote {target}")
    assert MARKER in target.read_text()
    target.write_text("// someone else's\n")
    refused = subprocess.run(
        [TETHER, "watch", "pi-extension", "--install", "--project-dir", str(project)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert refused.returncode == 2 and "was not written by tether" in refused.stderr
    assert target.read_text() == "// someone else's\n"


def _install_pi_extension(project: Path, *args: str, env: dict[str, str]) -> Path:
    done = subprocess.run(
        [TETHER, "watch", "pi-extension", "--install", "--project-dir", str(project), *args],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
        env=env,
    )
    return Path(done.stdout.splitlines()[0].removeprefix("wrote "))


def _baked(extension: Path) -> object:
    (line,) = [x for x in extension.read_text().splitlines() if "const BAKED_HOME" in x]
    return json.loads(line.split("= ", 1)[1].rstrip(";"))


def test_the_installed_pi_extension_knows_the_project_s_home(
    tmp_path: Path, tether_home: Path
) -> None:
    project = tmp_path / "p"
    project.mkdir()
    (project / "tether.toml").write_text('home = "state"\n')
    base = {k: v for k, v in os.environ.items() if k != "TETHER_HOME"}
    base["HOME"] = str(tmp_path / "user")
    # the home tether resolves for the project: tether.toml's `home`, else $TETHER_HOME
    assert _baked(_install_pi_extension(project, env=base)) == str(project / "state")
    explicit = {**base, "TETHER_HOME": str(tether_home)}
    assert _baked(_install_pi_extension(project, env=explicit)) == str(tether_home)
    # one user-wide file serves every project: only an explicit home is baked in
    user_wide = _install_pi_extension(project, "--scope", "user", env=base)
    assert user_wide == tmp_path / "user" / ".pi" / "agent" / "extensions" / "tether-watch.ts"
    assert _baked(user_wide) is None
    assert _baked(_install_pi_extension(project, "--scope", "user", env=explicit)) == str(
        tether_home
    )


DRIVER = """\
import extension from "./tether-watch.ts";
extension({ on: () => {}, sendUserMessage: () => {} });
console.log(process.pid);
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    ("toml", "baked", "expected"),
    [
        ('home = "state"  # kept here\n[watch]\nhome = "not this"\n', None, "state"),
        ("[watch]\ninterval = 5\n", None, ".tether"),
        ('home = "state"\n', "baked", "baked"),
    ],
    ids=["toml-home", "no-home-key", "baked-wins"],
)
def test_the_pi_extension_finds_the_home_without_tether_home(
    tmp_path: Path, toml: str, baked: str | None, expected: str
) -> None:
    """The extension's own lookup, run by the TypeScript loader Pi uses (jiti)."""
    jiti = agent_clis.require("jiti")
    project = tmp_path / "p"
    (project / "deep" / "er").mkdir(parents=True)
    (project / "tether.toml").write_text(toml)
    code = tmp_path / "code"
    code.mkdir()
    (code / "tether-watch.ts").write_text(render(home=None if baked is None else tmp_path / baked))
    (code / "driver.ts").write_text(DRIVER)
    env = {k: v for k, v in os.environ.items() if k != "TETHER_HOME"}
    done = subprocess.run(
        [str(jiti), str(code / "driver.ts")],
        cwd=project / "deep" / "er",
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    pid = done.stdout.strip()
    where = tmp_path / baked if baked is not None else project / expected
    assert (where / "watch" / "endpoints" / f"pi-{pid}.json").is_file()


def _deaf_endpoint(home: Path, session: str) -> subprocess.Popen[bytes]:
    """A live process announced as a Pi wake endpoint that never takes its requests."""
    proc = subprocess.Popen(["sleep", "600"])
    now = time.time()
    write_endpoint(
        home,
        {
            "kind": "pi",
            "pid": proc.pid,
            "agent_pid": proc.pid,
            "session_id": session,
            "registered": now,
            "updated": now,
            "last_activity": now - 3600,
            "idle": True,
        },
    )
    return proc


def _log(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        [TETHER, "watch", "log", *args],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
        cwd=cwd,
    )
    return done.stdout


def test_a_wake_request_nobody_takes_falls_back_to_the_pane(
    lab: TmuxLab, subagents_dir: Path, tether_home: Path, conn: sqlite3.Connection, tmp_path: Path
) -> None:
    pane, recording = lab.orchestrator()
    lab.subagent(subagents_dir / "a", ["--format", "claude-code", "--silent"])
    deaf = _deaf_endpoint(tether_home, "pi-session")
    try:
        clock = FakeClock(start=datetime.now(UTC))
        add_orchestrator(
            conn,
            Registration(tmux_pane=pane, tmux_socket=lab.socket, sessions=("pi-session",)),
            clock=clock,
        )
        settings = WatchSettings(subagents_folders=[str(subagents_dir)], tmux_socket=lab.socket)
        assert (settings.ack_timeout, settings.wake_min_interval) == (10.0, 60.0)
        lines: list[str] = []
        dog = Watchdog(settings, tether_home, conn, clock=clock, log=lines.append)
        wait_until(lambda: dog.check().running == 1, what="the subagent")
        clock.advance(50)
        first = dog.check().decisions[0]
        assert first.action == "requested"  # written for the endpoint: not "woken"
        request = tether_home / "watch" / "requests" / f"pi-{deaf.pid}.json"
        assert request.exists()
        clock.advance(5)  # within ack_timeout: wait for the endpoint
        assert dog.check().decisions[0].action == "rate-limited"
        clock.advance(6)  # 11 s without an acknowledgement: through the pane, at once
        fallback = dog.check().decisions[0]
        assert (fallback.action, fallback.wake_id) == ("woken", first.wake_id)
        assert fallback.note == f"pi-{deaf.pid} did not take the wake request; it was withdrawn"
        assert not request.exists()  # withdrawn: it cannot start a late turn
        (typed,) = wait_until(recording.lines, what="the wake typed into the pane")
        assert typed["line"].startswith("[tether watch] You have been idle for 50 s")
        assert f"wake #{first.wake_id}: {fallback.note}" in lines
        (wake,) = list_wakes(conn)
        harness = wake.channels[0]
        assert harness["withdrawn"] is True and harness["acknowledged_at"] is None
        fell_back = [(c["channel"], c["ok"]) for c in wake.channels if c.get("fallback")]
        assert fell_back == [("tmux", True), ("log", True), ("tmux-status", True)]
        assert (wake.delivered, wake.outcome) == (True, "woken")
        # the next wake does not ask the endpoint that did not listen
        clock.advance(60)
        second = dog.check().decisions[0]
        assert second.action == "woken"
        dog.close()
        asked, typed_again = list_wakes(conn)[1].channels[:2]
        assert asked == {
            "channel": "harness",
            "ok": False,
            "detail": f"not asked: pi-{deaf.pid} did not take the last request",
        }
        assert typed_again["channel"] == "tmux" and typed_again["ok"]
        wait_until(lambda: len(recording.lines()) == 2, what="the second wake in the pane")
        assert not request.exists()
        assert [e["outcome"] for e in json.loads(_log(tmp_path, "--json"))] == ["woken", "woken"]
    finally:
        deaf.kill()
        deaf.wait()


def test_without_a_pane_an_untaken_request_tells_the_human_and_says_so(
    lab: TmuxLab, subagents_dir: Path, tether_home: Path, conn: sqlite3.Connection, tmp_path: Path
) -> None:
    lab.subagent(subagents_dir / "a", ["--format", "claude-code", "--silent"])
    deaf = _deaf_endpoint(tether_home, "pi-session")
    orchestrator = subprocess.Popen(["sleep", "600"])  # a process with no pane
    try:
        clock = FakeClock(start=datetime.now(UTC))
        add_orchestrator(
            conn, Registration(pid=orchestrator.pid, sessions=("pi-session",)), clock=clock
        )
        settings = WatchSettings(subagents_folders=[str(subagents_dir)], tmux_socket=lab.socket)
        lines: list[str] = []
        dog = Watchdog(settings, tether_home, conn, clock=clock, log=lines.append)
        wait_until(lambda: dog.check().running == 1, what="the subagent")
        clock.advance(50)
        assert dog.check().decisions[0].action == "requested"
        clock.advance(11)
        fallback = dog.check().decisions[0]
        dog.close()
        assert fallback.action == "human-only"
        (wake,) = list_wakes(conn)
        assert [c["channel"] for c in wake.channels if c.get("fallback")] == ["log"]
        assert (wake.delivered, wake.outcome) == (False, "written, not acknowledged")
        assert lines[-1].startswith("wake: [tether watch] You have been idle for 50 s")
        assert _log(tmp_path).endswith(" via harness, log (written, not acknowledged)\n")
    finally:
        for proc in (deaf, orchestrator):
            proc.kill()
            proc.wait()
