"""Record the real hook payloads of the installed agent CLIs into tests/gate/golden/.

    .venv/bin/python tests/gate/record_golden.py [claude-code codex copilot pi]

Each CLI runs against the scripted model (tether.testing.model_server) with the gate
installed by ``tether.gate.install`` into a temporary project, except that the
hook command is a recorder that saves what arrives on stdin. The first payload
of each event is kept, with temporary paths replaced by placeholders
(``<workdir>``, ``<home>``, ``<tmp>``). The CLIs are looked up in
``.ci/agents/node_modules/.bin`` (or ``TETHER_AGENTS_BIN``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from tether.gate import install
from tether.testing.model_server import ModelServer, client_setup

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).parent / "golden"
AGENTS_BIN = Path(
    os.environ.get("TETHER_AGENTS_BIN", ROOT / ".ci" / "agents" / "node_modules" / ".bin")
)

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
        argv = [str(AGENTS_BIN / "codex"), "exec", "--json", *setup.extra_args]
        argv += ["--dangerously-bypass-hook-trust", prompt]
    elif harness == "claude-code":
        argv = [str(AGENTS_BIN / "claude"), "-p", prompt, "--output-format", "stream-json"]
        argv += ["--verbose", "--model", "mock-model", *setup.extra_args]
    elif harness == "copilot":
        # Repository hooks load only in a trusted folder.
        copilot_home = Path(setup.env["COPILOT_HOME"])
        copilot_home.mkdir(parents=True, exist_ok=True)
        (copilot_home / "config.json").write_text(json.dumps({"trustedFolders": [str(work)]}))
        argv = [str(AGENTS_BIN / "copilot"), "-p", prompt, "--output-format", "json"]
        argv += list(setup.extra_args)
    else:
        argv = [str(AGENTS_BIN / "pi"), *setup.extra_args, "--model", "mock-model"]
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
            change = install.plan(
                harness,
                "project",
                install=True,
                project_dir=str(work),
                gate=[sys.executable, str(recorder)],
                environ=env,
            )
            install.apply(change)
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


def main() -> None:
    for harness in sys.argv[1:] or list(install.HARNESSES):
        print(harness, record(harness))


if __name__ == "__main__":
    main()
