"""``--commands-file``: the scripted agent runs the given commands as its tool calls."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

AGENT = (sys.executable, "-m", "tether.harnesses.scripted")


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*AGENT, *args, "--", "the prompt"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_each_line_is_one_tool_step_run_as_argv(tmp_path: Path) -> None:
    script = tmp_path / "commands.txt"
    script.write_text(
        "# a comment, then a blank line\n\n"
        f"{sys.executable} -c \"import sys; print('got', sys.argv[1:])\" 'two words' $HOME\n"
        "echo second\n",
        encoding="utf-8",
    )
    log = tmp_path / "exec.log"
    done = _run(tmp_path, "--commands-file", str(script), "--exec-log", str(log))
    assert done.returncode == 0, done.stderr
    lines = [json.loads(x) for x in done.stdout.splitlines()]
    results = [
        block["content"]
        for line in lines
        if line["type"] == "user"
        for block in line["message"]["content"]
        if block.get("type") == "tool_result"
    ]
    # argv split with shlex and no shell: quotes group, $HOME stays literal
    assert results == ["got ['two words', '$HOME']", "second"]
    assert [x.split()[:4] for x in log.read_text().splitlines()] == [
        ["step", "1", "call", "1"],
        ["step", "2", "call", "1"],
    ]
    final = lines[-1]
    assert final["type"] == "result" and final["result"] == "All 3 steps done."


def test_a_missing_commands_file_is_a_usage_error(tmp_path: Path) -> None:
    done = _run(tmp_path, "--commands-file", str(tmp_path / "nope.txt"))
    assert done.returncode == 2
    assert "cannot read --commands-file" in done.stderr
    assert done.stdout == ""


def test_commands_file_excludes_steps(tmp_path: Path) -> None:
    script = tmp_path / "c.txt"
    script.write_text("echo x\n", encoding="utf-8")
    done = _run(tmp_path, "--commands-file", str(script), "--steps", "3")
    assert done.returncode == 2
    assert "not allowed with argument" in done.stderr
