"""Record the real hook payloads of the installed agent CLIs into tests/gate/golden/.

    .venv/bin/python tests/gate/record_golden.py [claude-code codex copilot pi]

Each CLI runs against the scripted model (tests/gate/mockmodel.py) with the gate
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

sys.path.insert(0, str(Path(__file__).parent))

from mockmodel import MockModel, Script

from tether.gate import install

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


def harness_env(harness: str, base: Path, url: str) -> dict[str, str]:
    home = base / "home"
    env = dict(os.environ, HOME=str(home))
    if harness == "claude-code":
        env |= {
            "CLAUDE_CONFIG_DIR": str(home / ".claude"),
            "ANTHROPIC_BASE_URL": url,
            "ANTHROPIC_API_KEY": "sk-test",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
        }
    elif harness == "codex":
        env |= {"CODEX_HOME": str(home / ".codex"), "MOCK_API_KEY": "sk-test"}
    elif harness == "copilot":
        env |= {
            "COPILOT_HOME": str(home / ".copilot"),
            "COPILOT_PROVIDER_BASE_URL": url + "/v1",
            "COPILOT_PROVIDER_TYPE": "openai",
            "COPILOT_PROVIDER_API_KEY": "sk-test",
            "COPILOT_MODEL": "mock-model",
            "COPILOT_OFFLINE": "true",
        }
    else:
        env |= {"PI_CODING_AGENT_DIR": str(home / ".pi" / "agent"), "PI_OFFLINE": "1"}
    return env


def prepare(harness: str, base: Path, work: Path, url: str) -> list[str]:
    """Write the harness's own config for the mock; return the argv to run."""
    home = base / "home"
    prompt = "Run the scripted steps."
    if harness == "claude-code":
        return [
            str(AGENTS_BIN / "claude"),
            "-p",
            prompt,
            "--output-format",
            "stream-json",
            "--verbose",
            "--model",
            "mock-model",
            "--allowedTools",
            "Bash",
        ]
    if harness == "codex":
        (home / ".codex").mkdir(parents=True, exist_ok=True)
        (home / ".codex" / "config.toml").write_text(
            'model = "mock-model"\nmodel_provider = "mock"\n[model_providers.mock]\n'
            f'name = "Mock"\nbase_url = "{url}/v1"\nenv_key = "MOCK_API_KEY"\n'
            'wire_api = "responses"\nrequest_max_retries = 0\nstream_max_retries = 0\n'
            f'[projects."{work}"]\ntrust_level = "trusted"\n'
        )
        return [
            str(AGENTS_BIN / "codex"),
            "exec",
            "--json",
            "--skip-git-repo-check",
            "--dangerously-bypass-approvals-and-sandbox",
            "--dangerously-bypass-hook-trust",
            prompt,
        ]
    if harness == "copilot":
        (home / ".copilot").mkdir(parents=True, exist_ok=True)
        (home / ".copilot" / "config.json").write_text(json.dumps({"trustedFolders": [str(work)]}))
        return [
            str(AGENTS_BIN / "copilot"),
            "-p",
            prompt,
            "--output-format",
            "json",
            "--allow-all-tools",
            "--no-ask-user",
        ]
    agent_dir = home / ".pi" / "agent"
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "models.json").write_text(
        json.dumps(
            {
                "providers": {
                    "mock": {
                        "baseUrl": url + "/v1",
                        "api": "openai-completions",
                        "apiKey": "sk-test",
                        "compat": {
                            "supportsDeveloperRole": False,
                            "supportsReasoningEffort": False,
                        },
                        "models": [
                            {
                                "id": "mock-model",
                                "name": "Mock",
                                "contextWindow": 128000,
                                "maxTokens": 16384,
                            }
                        ],
                    }
                }
            }
        )
    )
    return [
        str(AGENTS_BIN / "pi"),
        "--provider",
        "mock",
        "--model",
        "mock-model",
        "--mode",
        "json",
        prompt,
    ]


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
        with MockModel(Script(steps=3)) as mock:
            argv = prepare(harness, base, work, mock.url)
            env = harness_env(harness, base, mock.url) | {"RECORD_OUT": str(out)}
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
