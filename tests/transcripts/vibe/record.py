"""Record real Vibe against tether's scripted model server into this folder.

    .venv/bin/python -m tests.transcripts.vibe.record [VIBE_EXECUTABLE [SCENARIO...]]

Run by hand (never by the tests): it overwrites ``<name>.jsonl``,
``.stderr.txt``, ``.session.jsonl``, ``.mock-log.jsonl`` and
``.expected.json`` for the scenarios below. The expected counts are worked out
here from the model server's request log and from the raw JSON lines by the
rules named in ``stream_counts``, never by tether's adapter, so the adapter
tests compare against an independent count.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tests import agent_clis

from tether.testing.model_server import ModelServer, client_setup, read_log, summarize

HERE = Path(__file__).resolve().parent
PROMPT = "Run the scripted steps."
# scenario -> (think seconds, timeout wrapper seconds). Vibe takes seconds to
# start (more on a loaded machine), so forever gets a minute, not the 20 s of
# the shared recordings.
SCENARIOS = {"five-steps": (0.0, 120), "forever": (0.25, 60), "failing-tool": (0.0, 120)}
# The files are named tether-<scenario> (failing-tool as it is): five-steps and
# forever are also the names of the shared recordings copied beside them.
OUT_NAMES = {"five-steps": "tether-five-steps", "forever": "tether-forever"}


def _scrub(text: str, subs: list[tuple[str, str]]) -> str:
    for old, new in subs:
        text = text.replace(old, new)
    return text


def _json_lines(text: str) -> list[dict[str, Any]]:
    out = []
    for line in text.splitlines():
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict):
            out.append(obj)
    return out


def _failed(state: dict[str, Any]) -> bool:
    display = state.get("display")
    unsuccessful = isinstance(display, dict) and display.get("success") is False
    return state.get("status") != "completed" or unsuccessful


def record(exe: Path, scenario: str, think: float, limit: int) -> None:
    name = OUT_NAMES.get(scenario, scenario)
    with tempfile.TemporaryDirectory(prefix="vibe-rec-") as tmp_name:
        tmp = Path(tmp_name)
        log = tmp / "mock-log.jsonl"
        with ModelServer(scenario, think=think, log_path=log) as server:
            setup = client_setup("vibe", tmp / "home", server.port)
            work = tmp / "work"
            work.mkdir()
            command = ["vibe", "-p", PROMPT, "--output", "streaming", *setup.extra_args]
            env = {"PATH": "/usr/bin:/bin", **setup.env}
            started = time.monotonic()
            done = subprocess.run(
                ["timeout", "-k", "5", str(limit), str(exe), *command[1:]],
                cwd=work,
                env=env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                check=False,
            )
            wall = round(time.monotonic() - started, 2)
            port = server.port
        subs = [
            (str(work), "<workdir>"),
            (str(setup.home), "<home>"),
            (str(tmp), "<tmp>"),
            (f"127.0.0.1:{port}", "127.0.0.1:<port>"),
        ]
        stream = _scrub(done.stdout.decode("utf-8", "replace"), subs)
        stderr = _scrub(done.stderr.decode("utf-8", "replace"), subs)
        lines = _json_lines(stream)
        sessions = {o["sessionId"] for o in lines if isinstance(o.get("sessionId"), str)}
        session_id = next(iter(sessions)) if len(sessions) == 1 else None
        journal_dir = setup.home / ".vibe" / "logs" / "session" / "unified"
        segments = sorted((journal_dir / (session_id or "-") / "journal").glob("*.jsonl"))
        journal = _scrub(segments[0].read_text("utf-8"), subs) if segments else ""
        records = _json_lines(journal)
        completions = [
            r
            for r in records
            if r.get("type") == "action_result"
            and str(r.get("payload", {}).get("result", {}).get("type", "")).startswith(
                "completion_"
            )
        ]
        effects = {o["id"]: o for o in lines if o.get("type") == "effect"}
        finished = [
            o
            for o in effects.values()
            if o.get("state", {}).get("status") in ("completed", "failed", "skipped")
        ]
        summary = summarize(read_log(log))
        log_text = _scrub(log.read_text("utf-8"), subs)
        version = subprocess.run(
            [str(exe), "--version"], capture_output=True, text=True, check=False
        ).stdout.strip()
    expected = {
        "harness": "vibe",
        "scenario": scenario,
        "cli": {"package": "mistral-vibe (PyPI, Python >= 3.12)", "version": version},
        "command": command,
        "wrapped_in": f"timeout -k 5 {limit}",
        "env": {"VIBE_HOME": "<home>/.vibe", "MOCK_API_KEY": "sk-test"},
        "exit_code": done.returncode,
        # 124: the command ended on SIGTERM; -9: it outlived the 5 s grace and
        # timeout's SIGKILL to its process group took timeout itself too
        "timed_out": done.returncode in (124, -9),
        "wall_seconds": wall,
        "model_calls": summary.model_calls,
        "side_calls": summary.side_calls,
        "other_requests": summary.other_requests,
        "tool_calls_served": summary.tool_calls_served,
        "tool_results_returned_to_model": summary.tool_results_returned,
        "final_text_served": summary.final_text_served,
        "tool_calls": len(effects),
        "tool_results": len(finished),
        "tool_errors": sum(1 for o in finished if _failed(o["state"])),
        "session_id": session_id,
        "stream_lines": len(stream.splitlines()),
        "stream_counts": {
            "session_id": session_id,
            "session_id_source": "sessionId (every line)",
            "tool_calls": len(effects),
            "tool_calls_rule": "type=effect (distinct id)",
            "tool_results": len(finished),
            "tool_results_rule": "effect with state.status completed/failed/skipped",
            "tool_errors_rule": "effect with state.status other than completed, or "
            "state.display.success false (a command that exits non-zero stays completed)",
            "assistant_messages": sum(
                1 for o in lines if o.get("type") == "message" and o.get("role") == "assistant"
            ),
        },
        "session_file_lines": len(journal.splitlines()),
        "iterations": len(completions),
        "iterations_from": "session file: action_result records of completion actions",
        "files": {
            "stream": f"{name}.jsonl",
            "stderr": f"{name}.stderr.txt",
            "mock_log": f"{name}.mock-log.jsonl",
            "session": f"{name}.session.jsonl",
        },
    }
    (HERE / f"{name}.jsonl").write_text(stream, "utf-8")
    (HERE / f"{name}.stderr.txt").write_text(stderr, "utf-8")
    (HERE / f"{name}.session.jsonl").write_text(journal, "utf-8")
    (HERE / f"{name}.mock-log.jsonl").write_text(log_text, "utf-8")
    (HERE / f"{name}.expected.json").write_text(json.dumps(expected, indent=2) + "\n")
    print(f"{scenario}: rc={done.returncode} wall={wall}s model_calls={summary.model_calls}")


def main() -> None:
    exe = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else agent_clis.find("vibe")
    if exe is None or not exe.exists():
        sys.exit(f"{agent_clis.missing_reason('vibe')}, or name the executable")
    chosen = sys.argv[2:] or list(SCENARIOS)
    for scenario in chosen:
        think, limit = SCENARIOS[scenario]
        record(exe, scenario, think, limit)
    shutil.rmtree(HERE / "__pycache__", ignore_errors=True)


if __name__ == "__main__":
    main()
