"""Record the real hook payloads of the installed agent CLIs into tests/gate/golden/.

    .venv/bin/python -m tests.gate.record_golden [claude-code codex copilot pi notifications]

Each CLI runs against the scripted model (tether.testing.model_server) with the gate
installed by ``tether.gate.hook_install`` into a temporary project, except that the
hook command is a recorder that saves what arrives on stdin. The first payload
of each event is kept, with temporary paths replaced by placeholders
(``<workdir>``, ``<home>``, ``<tmp>``). The CLIs are found by
``tests/agent_clis.py`` (``.ci/agents``, or ``$TETHER_AGENT_BIN_DIR``).

``notifications`` runs Claude Code interactively in a private tmux server (its
``Notification`` hook fires only there), in the ``default`` permission mode,
with a model that asks for ``touch notified.txt``: the permission dialog opens
(``PermissionRequest``; ``Notification`` ``permission_prompt`` six seconds
later), Enter approves it, the turn ends, and with ``messageIdleNotifThresholdMs``
at one second the ``idle_prompt`` notification follows. Those three payloads are
saved as ``PermissionRequest``, ``Notification.permission_prompt`` and
``Notification.idle_prompt``, and every payload of the session up to the
``idle_prompt``, in order, as ``claude-code/needs-permission.sequence.jsonl``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from tests import agent_clis

from tether.gate import hook_file, hook_install
from tether.testing.model_server import ModelServer, client_setup
from tether.testing.model_server.scenario import FinalText, Scenario, ShellCalls

GOLDEN = Path(__file__).parent / "golden"


def _cli(harness: str) -> str:
    """The installed CLI of ``harness``; exits with the reason when it is missing."""
    path = agent_clis.find(harness)
    if path is None:
        sys.exit(f"record_golden: {agent_clis.missing_reason(harness)}")
    return str(path)


RECORDER = """\
import json, os, sys
args = sys.argv[1:]
harness = args[args.index("--harness") + 1]
event = args[args.index("--event") + 1] if "--event" in args else None
raw = sys.stdin.buffer.read().decode("utf-8", "replace")
with open(os.environ["RECORD_OUT"], "a") as out:
    out.write(json.dumps({"harness": harness, "event": event, "raw": raw}) + "\\n")
"""


def prepare(harness: str, base: Path, work: Path, port: int) -> tuple[list[str], dict[str, str]]:
    """Configure the CLI for the scripted model; the argv to run and its environment."""
    setup = client_setup(harness, base / "home", port)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **setup.env}
    prompt = "Run the scripted steps."
    if harness == "codex":
        # Project hooks load in a trusted project only; hook trust is bypassed
        # for this recording (the user trusts them once, see the how-to).
        with (Path(setup.env["CODEX_HOME"]) / "config.toml").open("a") as config:
            config.write(f'\n[projects."{work}"]\ntrust_level = "trusted"\n')
        argv = [_cli("codex"), "exec", "--json", *setup.extra_args]
        argv += ["--dangerously-bypass-hook-trust", prompt]
    elif harness == "claude-code":
        argv = [_cli("claude-code"), "-p", prompt, "--output-format", "stream-json"]
        argv += ["--verbose", "--model", "mock-model", *setup.extra_args]
    elif harness == "copilot":
        # Repository hooks load only in a trusted folder.
        copilot_home = Path(setup.env["COPILOT_HOME"])
        copilot_home.mkdir(parents=True, exist_ok=True)
        (copilot_home / "config.json").write_text(json.dumps({"trustedFolders": [str(work)]}))
        argv = [_cli("copilot"), "-p", prompt, "--output-format", "json"]
        argv += list(setup.extra_args)
    else:
        argv = [_cli("pi"), *setup.extra_args, "--model", "mock-model"]
        argv += ["--mode", "json", prompt]
    return argv, env


def scrub(text: str, base: Path, work: Path) -> str:
    dashed = str(work).replace("/", "-")
    text = text.replace(dashed, "<workdir-dashed>")
    for path, name in ((work, "<workdir>"), (base / "home", "<home>"), (base, "<tmp>")):
        text = text.replace(str(path), name)
    return text


def record(harness: str) -> list[str]:
    with tempfile.TemporaryDirectory(prefix="tether-rec-") as tmp:
        base = Path(tmp).resolve()
        work = base / "work"
        work.mkdir()
        recorder = base / "recorder.py"
        recorder.write_text(RECORDER)
        out = base / "records.jsonl"
        with ModelServer("five-steps") as server:
            argv, env = prepare(harness, base, work, server.port)
            env["RECORD_OUT"] = str(out)
            change = hook_install.plan(
                harness,
                "project",
                install=True,
                project_dir=str(work),
                gate=[sys.executable, str(recorder)],
                environ=env,
            )
            hook_file.apply(change)
            subprocess.run(
                argv,
                cwd=work,
                env=env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=120,
                check=False,
            )
        saved = []
        target = GOLDEN / harness
        target.mkdir(parents=True, exist_ok=True)
        seen: set[str] = set()
        for line in out.read_text().splitlines() if out.exists() else []:
            entry = json.loads(line)
            payload = json.loads(entry["raw"])
            event = entry["event"] or payload.get("hook_event_name")
            if event in seen:
                continue
            seen.add(event)
            text = scrub(json.dumps(payload, indent=2, ensure_ascii=False), base, work)
            (target / f"{event}.payload.json").write_text(text + "\n")
            saved.append(event)
        return saved


def _save(harness: str, name: str, payload: dict[str, Any], base: Path, work: Path) -> None:
    text = scrub(json.dumps(payload, indent=2, ensure_ascii=False), base, work)
    target = GOLDEN / harness
    target.mkdir(parents=True, exist_ok=True)
    (target / f"{name}.payload.json").write_text(text + "\n")


NEEDS_PERMISSION = Scenario(
    "needs-permission",
    lambda step: ShellCalls(("touch notified.txt",)) if step < 2 else FinalText("Done."),
    last_step=2,
)
NOTIFICATION_NAMES: dict[tuple[Any, Any], str] = {
    ("PermissionRequest", None): "PermissionRequest",
    ("Notification", "permission_prompt"): "Notification.permission_prompt",
    ("Notification", "idle_prompt"): "Notification.idle_prompt",
}


def _claude_interactive(base: Path, work: Path, port: int, out: Path) -> list[str]:
    """Claude Code's config for an interactive session, hooks recording to ``out``."""
    setup = client_setup("claude-code", base / "home", port)
    config = Path(setup.env["CLAUDE_CONFIG_DIR"])
    config.mkdir(parents=True, exist_ok=True)
    trusted = {"hasTrustDialogAccepted": True, "hasCompletedProjectOnboarding": True}
    (config / ".claude.json").write_text(
        json.dumps(
            {
                "hasCompletedOnboarding": True,
                "messageIdleNotifThresholdMs": 1000,
                "projects": {str(work): trusted},
                "customApiKeyResponses": {"approved": [setup.env["ANTHROPIC_API_KEY"]]},
            }
        )
    )
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "TERM": "xterm-256color"}
    env |= setup.env | {"RECORD_OUT": str(out)}
    recorder = base / "recorder.py"
    recorder.write_text(RECORDER)
    change = hook_install.plan(
        "claude-code",
        "project",
        install=True,
        project_dir=str(work),
        gate=[sys.executable, str(recorder)],
        environ=env,
    )
    hook_file.apply(change)
    argv = ["env", *[f"{k}={v}" for k, v in env.items()], _cli("claude-code")]
    argv += ["--model", "mock-model", "--permission-mode", "default", "Run the scripted steps."]
    return argv


def _wait_gone(pid: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)


def record_notifications(timeout: float = 90.0) -> list[str]:
    """Claude Code's PermissionRequest and Notification payloads, from an interactive session."""
    socket = f"tether-rec-{uuid.uuid4().hex[:8]}"
    tmux = ["tmux", "-L", socket]
    with tempfile.TemporaryDirectory(prefix="tether-rec-") as tmp:
        base = Path(tmp).resolve()
        work = base / "work"
        work.mkdir()
        out = base / "records.jsonl"
        found: dict[str, dict[str, Any]] = {}
        sequence: list[dict[str, Any]] = []
        with ModelServer(NEEDS_PERMISSION) as server:
            argv = _claude_interactive(base, work, server.port, out)
            session = ["new-session", "-d", "-s", "rec", "-x", "200", "-y", "50", "-c", str(work)]
            session += ["-P", "-F", "#{pane_pid}"]
            started = subprocess.run(
                [*tmux, *session, *argv], check=True, timeout=30, capture_output=True, text=True
            )
            try:
                deadline = time.monotonic() + timeout
                approved = False
                while len(found) < len(NOTIFICATION_NAMES) and time.monotonic() < deadline:
                    time.sleep(0.5)
                    lines = out.read_text().splitlines() if out.exists() else []
                    sequence = [json.loads(json.loads(line)["raw"]) for line in lines]
                    for payload in sequence:
                        key = (payload.get("hook_event_name"), payload.get("notification_type"))
                        name = NOTIFICATION_NAMES.get(key)
                        if name is not None and name not in found:
                            found[name] = payload
                    if "Notification.permission_prompt" in found and not approved:
                        approved = True  # "Yes" is the dialog's first choice
                        subprocess.run([*tmux, "send-keys", "-t", "rec", "Enter"], timeout=10)
            finally:
                subprocess.run([*tmux, "kill-server"], capture_output=True, timeout=10)
                _wait_gone(int(started.stdout.strip()))
        for name, payload in found.items():
            _save("claude-code", name, payload, base, work)
        if "Notification.idle_prompt" in found:
            end = sequence.index(found["Notification.idle_prompt"]) + 1
            text = "".join(json.dumps(p, ensure_ascii=False) + "\n" for p in sequence[:end])
            (GOLDEN / "claude-code" / "needs-permission.sequence.jsonl").write_text(
                scrub(text, base, work)
            )
        return sorted(found)


def main() -> None:
    for harness in sys.argv[1:] or [*hook_install.HARNESSES, "notifications"]:
        saved = record_notifications() if harness == "notifications" else record(harness)
        print(harness, saved)


if __name__ == "__main__":
    main()
