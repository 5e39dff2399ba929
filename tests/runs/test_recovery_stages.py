"""Supervisor death, and post-run stages."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psutil
from tests.runs.conftest import TETHER, Project, poll
from tests.support import processes


def test_kill_9_of_supervisor_takes_agent_group_down_and_run_is_abandoned(
    project: Project,
) -> None:
    child_pid_file = project.root.parent / "child.pid"
    project.write_config(
        [
            "--steps",
            "500",
            "--step-delay",
            "0.05",
            "--spawn-child",
            "--child-pid-file",
            str(child_pid_file),
        ]
    )
    supervisor = subprocess.Popen(
        [TETHER, "run", "--prompt", "go", "--iterations", "90"],
        cwd=project.root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:

        def events_flowing() -> bool:
            return len(project.executed()) >= 3 and child_pid_file.exists()

        assert poll(events_flowing, 20)
        # every process the run started (the sandbox, the agent, its child): their
        # pids as this machine sees them (inside the sandbox they have others)
        started = psutil.Process(supervisor.pid).children(recursive=True)
        assert any("time.sleep(3600)" in " ".join(processes.argv(p)) for p in started)
        supervisor.send_signal(signal.SIGKILL)
        supervisor.wait(timeout=5)

        def all_gone() -> bool:
            return not any(processes.running(p) for p in started)

        assert poll(all_gone, 5), "a process of the run outlived its supervisor"
    finally:
        if supervisor.poll() is None:
            supervisor.kill()
    listed = subprocess.run(
        [TETHER, "runs", "list", "--json"],
        cwd=project.root,
        capture_output=True,
        text=True,
        check=True,
    )
    (run,) = json.loads(listed.stdout)
    assert run["status"] == "abandoned"
    assert run["iterations"] > 0
    assert Path(run["run_dir"], "events.jsonl").stat().st_size > 0
    # the abandoned run has a report from its events, so it can be followed up
    report = json.loads(Path(run["run_dir"], "report.json").read_text(encoding="utf-8"))
    assert report["stop_reason"] == "abandoned"
    assert report["iterations"]["used"] == run["iterations"]
    shown = subprocess.run(
        [TETHER, "report", run["id"]], cwd=project.root, capture_output=True, text=True
    )
    assert shown.returncode == 0, shown.stderr
    assert "abandoned: its supervisor died" in shown.stdout


def test_post_run_stages_run_after_completion_only(project: Project) -> None:
    marker = project.root.parent / "stage-ran"
    stage = [sys.executable, "-c", f"open({str(marker)!r}, 'a').write('x')"]
    project.write_config(["--steps", "3"], extra="")
    text = (project.root / "tether.toml").read_text()
    text = text.replace(
        "default = true\n", f"default = true\npost_run = [{json.dumps(stage)}]\n", 1
    )
    (project.root / "tether.toml").write_text(text)
    code, record = project.run_json("--prompt", "go")
    assert code == 0
    stages = json.loads(Path(record["run_dir"], "stages.json").read_text())
    assert stages[0]["status"] == "ok"
    assert marker.read_text() == "x"
    code, limited = project.run_json("--prompt", "go", "--iterations", "1")
    assert code == 20
    assert marker.read_text() == "x", "no stage after a limit stop"
    (skipped,) = limited["report"]["skipped_stages"]
    assert skipped["command"] == stage
    assert "skipped" in skipped["reason"]


def test_a_failing_post_run_stage_is_loud(project: Project) -> None:
    failing = [sys.executable, "-c", "import sys; print('2 checks failed'); sys.exit(3)"]
    never = [sys.executable, "-c", "raise SystemExit(0)"]
    project.write_config(["--steps", "2"])
    text = (project.root / "tether.toml").read_text()
    stages = f"post_run = [{json.dumps(failing)}, {json.dumps(never)}]\n"
    (project.root / "tether.toml").write_text(
        text.replace("default = true\n", f"default = true\n{stages}", 1)
    )
    code, record = project.run_json("--prompt", "go")
    assert code == 40, "a completed run whose check failed is not a plain success"
    assert record["status"] == "completed"
    assert record["exit_code"] == 40
    assert "post-run stage failed" in record["stop_reason"]
    assert record["stages"] == [
        {"command": failing, "status": "failed", "exit_code": 3},
        {"command": never, "status": "skipped", "exit_code": None},
    ]
    full = json.loads(Path(record["run_dir"], "stages.json").read_text())
    assert "2 checks failed" in full[0]["output_tail"]
    # the store keeps it too: `runs show` tells the same story later
    shown = project.tether("runs", "show", record["id"], "--json")
    assert json.loads(shown.stdout)["stages"] == record["stages"]
    human = project.tether("run", "--prompt", "go")
    assert human.returncode == 40
    assert "post-run stage failed" in human.stdout


def test_a_recovered_report_takes_files_and_times_from_the_run_not_the_recovery(
    project: Project,
) -> None:
    commands = project.root.parent / "commands.txt"
    steps = ["touch made-1.txt", "touch made-2.txt", *["sleep 0.05"] * 400]
    commands.write_text("\n".join(steps) + "\n", encoding="utf-8")
    (project.root / "before.txt").write_text("there before the run\n", encoding="utf-8")
    project.write_config(["--commands-file", str(commands), "--step-delay", "0.02"])
    supervisor = subprocess.Popen(
        [TETHER, "run", "--prompt", "go", "--iterations", "100"],
        cwd=project.root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert poll(lambda: len(project.executed()) >= 4, 30)
        supervisor.send_signal(signal.SIGKILL)
        supervisor.wait(timeout=5)
        killed_at = datetime.now(UTC)
    finally:
        if supervisor.poll() is None:
            supervisor.kill()
    # the recovery comes later than the run's end, and must not take its own clock
    assert poll(lambda: datetime.now(UTC) - killed_at > timedelta(seconds=2), 10)
    listed = subprocess.run(
        [TETHER, "runs", "list", "--json"], cwd=project.root, capture_output=True, text=True
    )
    (run,) = json.loads(listed.stdout)
    assert run["status"] == "abandoned"
    report = json.loads(Path(run["run_dir"], "report.json").read_text(encoding="utf-8"))
    changed = {c["path"]: c["change"] for c in report["files_changed"]}
    new = ("untracked", "added")  # git or a file snapshot, as the run found its folder
    assert changed.get("made-1.txt") in new and changed.get("made-2.txt") in new, changed
    assert "before.txt" not in changed  # there before the run: not the run's change
    started = datetime.fromisoformat(run["started_at"])
    assert report["seconds"]["used"] <= (killed_at - started).total_seconds()
    assert datetime.fromisoformat(run["ended_at"]) <= killed_at
    text = Path(run["run_dir"], "report.md").read_text(encoding="utf-8")
    assert f"- {changed['made-1.txt']}: `made-1.txt`" in text
