"""``tether outbox``: a run proposes, a person approves or rejects — real git, a real bare remote.

The runs go through the real supervisor with the scripted agent, whose steps
are real subprocesses (``tether outbox propose`` among them); approving is a
real ``tether`` process outside every agent's process tree.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from tests.outbox.conftest import Repo, git

from tether.outbox.proposal_store import get, listing
from tether.store import connect


def _proposals(repo: Repo) -> list[dict[str, object]]:
    done = repo.person("outbox", "list", "--json")
    assert done.returncode == 0, done.stderr
    found: list[dict[str, object]] = json.loads(done.stdout)
    return found


def _conn(repo: Repo) -> sqlite3.Connection:
    return connect(repo.project.home)


def test_a_proposed_push_waits_and_a_person_pushes_exactly_the_pinned_commit(repo: Repo) -> None:
    before = repo.remote_head()
    repo.agent_does(
        "echo more >> README.md && git commit -qam 'Say more'",
        "tether outbox propose push -m 'share the README change'",
        "tether outbox approve $(ls $TETHER_OUTBOX_DIR | head -c 10)",
    )
    run = repo.tether("run", "--unit", "share-readme", "--prompt", "Share the README change.")
    assert run.returncode == 0, run.stdout + run.stderr
    (listed,) = _proposals(repo)
    pid = str(listed["id"])
    assert f"proposal {pid} waits for a person: push 1 commit" in run.stdout
    assert listed["kind"] == "push" and listed["state"] == "proposed"
    assert listed["run"] and listed["ticket"] is None and listed["unit"] == "share-readme"
    pinned = repo.head()
    assert listed["argv"] == ["git", "push", "origin", f"{pinned}:refs/heads/main"]
    assert listed["message"] == "share the README change"
    assert "Say more" in str(listed["summary"]) and "README.md" in str(listed["summary"])
    assert repo.remote_head() == before  # proposing changed nothing outside

    # the agent's own approval, from inside its run, was refused
    events = (repo.project.home / "runs" / str(listed["run"]) / "events.jsonl").read_text()
    assert "`tether outbox approve` is a human action" in events
    assert get(_conn(repo), pid).state == "proposed"

    approved = repo.person("outbox", "approve", pid, "--note", "fine to share")
    assert approved.returncode == 0, approved.stdout + approved.stderr
    assert approved.stdout.startswith(f"{pid} done: push 1 commit")
    assert repo.remote_head() == pinned
    record = get(_conn(repo), pid)
    assert record.state == "done" and record.exit_code == 0 and record.note == "fine to share"
    assert record.decided_by and "@" in record.decided_by and record.decided_at
    assert record.finished_at and "main" in (record.output or "")


def test_an_approval_from_inside_a_run_is_refused_and_nothing_is_pushed(repo: Repo) -> None:
    before = repo.remote_head()
    repo.agent_does("git commit -q --allow-empty -m 'Empty'", "tether outbox propose push")
    assert repo.tether("run", "--prompt", "Push it.").returncode == 0
    (listed,) = _proposals(repo)
    run = str(listed["run"])
    inside = {**repo.project.env(), "TETHER_RUN_ID": run}
    for verb in (["approve"], ["reject", "--reason", "no"]):
        denied = repo.tether("outbox", verb[0], str(listed["id"]), *verb[1:], env=inside)
        assert denied.returncode == 30, denied.stderr
        assert len(denied.stderr.strip().splitlines()) == 1
        assert f"`tether outbox {verb[0]}` is a human action" in denied.stderr
    assert repo.remote_head() == before
    assert get(_conn(repo), str(listed["id"])).state == "proposed"


def test_a_ref_that_moved_after_the_proposal_is_refused(repo: Repo) -> None:
    before = repo.remote_head()
    repo.agent_does(
        "git commit -q --allow-empty -m 'One'",
        "tether outbox propose push",
        "git commit -q --allow-empty -m 'Two, after the proposal'",
    )
    assert repo.tether("run", "--prompt", "Work.").returncode == 0
    (listed,) = _proposals(repo)
    done = repo.person("outbox", "approve", str(listed["id"]))
    assert done.returncode == 41, done.stdout + done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert "main now names" in done.stderr and "nothing was pushed" in done.stderr
    assert repo.remote_head() == before
    assert get(_conn(repo), str(listed["id"])).state == "proposed"  # the person may still reject
    rejected = repo.person("outbox", "reject", str(listed["id"]), "--reason", "pin it again")
    assert rejected.returncode == 0, rejected.stderr
    again = repo.person("outbox", "approve", str(listed["id"]))
    assert again.returncode == 41 and "already rejected" in again.stderr
    assert repo.remote_head() == before


DEPLOY_KIND = """
[outbox.kinds.deploy]
description = "Deploy a version to an environment"
command = ["{python}", "{script}", "--env", "{{env}}", "--version", "{{version}}"]
params.env = {{ choices = ["staging", "production"] }}
params.version = {{ pattern = "v[0-9]+\\\\.[0-9]+\\\\.[0-9]+" }}
"""


def _deploy_kind(repo: Repo, tmp_path: Path) -> tuple[str, Path]:
    import sys

    log = tmp_path / "deployed.log"
    script = tmp_path / "deploy.py"
    script.write_text(
        "import sys\n"
        f"open({str(log)!r}, 'a').write(' '.join(sys.argv[1:]) + '\\n')\n"
        "print('deployed', *sys.argv[1:])\n"
    )
    return DEPLOY_KIND.format(python=sys.executable, script=script), log


@pytest.mark.slow
def test_bad_input_is_one_line_with_its_exit_code_and_nothing_is_carried_out(
    repo: Repo, tmp_path: Path
) -> None:
    kind, log = _deploy_kind(repo, tmp_path)
    repo.agent_does(
        "tether outbox propose release v1",  # not a kind of this project: exit 3
        "tether outbox propose deploy env=prod version=v1.2.3",  # not a choice: exit 2
        "tether outbox propose deploy env=staging version=1.2",  # fails the pattern: exit 2
        "tether outbox propose deploy env=staging version=v1.2.3 user=me",  # no such parameter
        "tether outbox propose deploy env=staging",  # a parameter missing
        "tether outbox propose deploy env=staging version=--force",
        "tether outbox propose push --ref +main:main",  # a forced push is not proposed
        "tether outbox propose push --ref main:refs/notes/x",
        "tether outbox propose deploy env=staging version=v1.2.3",
        extra_toml=kind,
    )
    run = repo.tether("run", "--prompt", "Deploy.", "--json")
    assert run.returncode == 0, run.stdout + run.stderr
    outputs = [
        json.loads(line)
        for line in (repo.project.home / "runs")
        .glob("*/events.jsonl")
        .__next__()
        .read_text()
        .splitlines()
    ]
    results = [
        block
        for line in outputs
        if line.get("type") == "user"
        for block in line["message"]["content"]
        if block.get("type") == "tool_result"
    ]
    texts = [str(r["content"]) for r in results]
    assert "unknown outbox kind 'release'" in texts[0] and "Known: deploy, push" in texts[0]
    assert "env='prod' of kind 'deploy' is not allowed (one of: staging, production)" in texts[1]
    assert "version='1.2' of kind 'deploy' is not allowed (it must match" in texts[2]
    assert "kind 'deploy' has no parameter 'user'" in texts[3]
    assert "kind 'deploy' needs version=…" in texts[4]
    assert "may not start with `-`" in texts[5]
    assert "a forced push is not a proposal" in texts[6]
    assert "is not a branch or tag name" in texts[7]
    assert texts[8].startswith("proposed p-")
    (listed,) = _proposals(repo)  # only the good one
    assert listed["argv"][-4:] == ["--env", "staging", "--version", "v1.2.3"]  # type: ignore[index]
    assert not log.exists()

    for args, code, says in (
        (("outbox", "approve", "p-00000000"), 2, "no proposal 'p-00000000'"),
        (("outbox", "show", "nonsense"), 2, "no proposal 'nonsense'"),
        (("outbox", "reject", "p-00000000", "--reason", "x"), 2, "no proposal"),
    ):
        done = repo.person(*args)
        assert done.returncode == code, done.stderr
        assert done.stderr.count("\n") == 1 and says in done.stderr, done.stderr
    first = repo.person("outbox", "approve", str(listed["id"]))
    assert first.returncode == 0, first.stdout + first.stderr
    assert "deployed --env staging --version v1.2.3" in first.stderr
    twice = repo.person("outbox", "approve", str(listed["id"]))
    assert twice.returncode == 41 and twice.stderr.count("\n") == 1
    assert "is already done (approved by" in twice.stderr
    assert log.read_text() == "--env staging --version v1.2.3\n"  # carried out exactly once


def test_the_exit_codes_of_propose_outside_and_inside_a_run(repo: Repo, tmp_path: Path) -> None:
    kind, _ = _deploy_kind(repo, tmp_path)
    repo.agent_does("true", extra_toml=kind)
    outside = repo.tether("outbox", "propose", "push")
    assert outside.returncode == 2 and outside.stderr.count("\n") == 1
    assert "works inside a run tether started" in outside.stderr
    folder = tmp_path / "outbox"
    folder.mkdir()
    env = {**repo.project.env(), "TETHER_OUTBOX_DIR": str(folder)}
    for args, code in (
        (("release",), 3),
        (("deploy", "env=qa", "version=v1.0.0"), 2),
        (("deploy", "env=staging", "version=v1.0"), 2),
        (("push", "--remote", "upstream"), 2),
        (("push", "extra"), 2),
    ):
        done = repo.tether("outbox", "propose", *args, env=env)
        assert done.returncode == code, (args, done.stderr)
        assert done.stderr.count("\n") == 1, done.stderr
    assert not list(folder.iterdir())  # nothing written for bad input
    good = repo.tether("outbox", "propose", "push", "--json", env=env)
    assert good.returncode == 0, good.stderr
    assert json.loads(good.stdout)["argv"][:3] == ["git", "push", "origin"]
    assert len(list(folder.iterdir())) == 1


def test_a_forged_proposal_file_is_not_collected(repo: Repo, tmp_path: Path) -> None:
    """The agent writes its own files: a kind the project lacks, an argv of its choice, a
    commit that is not in the repository. tether derives everything again and refuses."""
    kind, log = _deploy_kind(repo, tmp_path)
    forged = [
        {"id": "p-11111111", "kind": "shell", "params": {}, "argv": ["rm", "-rf", "/"]},
        {"id": "p-22222222", "kind": "push", "params": {"src": "main"}, "commit": "0" * 40},
        {"id": "p-33333333", "kind": "deploy", "params": {"env": "prod", "version": "v1.0.0"}},
        {
            "id": "p-44444444",
            "kind": "deploy",
            "params": {"env": "staging", "version": "v1.0.0"},
            "argv": ["sh", "-c", "touch pwned"],
        },
    ]
    steps = [
        f"printf '%s' {_shell_quote(json.dumps(f))} > $TETHER_OUTBOX_DIR/{f['id']}.proposal.json"
        for f in forged
    ]
    repo.agent_does(*steps, extra_toml=kind)
    run = repo.tether("run", "--prompt", "Forge.")
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.count("proposal not collected:") == 3, run.stdout
    assert "unknown outbox kind 'shell'" in run.stdout
    assert "the pinned commit 0000000000000000000000000000000000000000 is not in" in run.stdout
    (listed,) = _proposals(repo)
    assert (
        listed["argv"]
        == [  # derived from the configuration, not the file
            *json.loads(json.dumps(listed["argv"]))[:2],
            "--env",
            "staging",
            "--version",
            "v1.0.0",
        ]
    )
    assert "touch" not in json.dumps(listed)
    approved = repo.person("outbox", "approve", str(listed["id"]))
    assert approved.returncode == 0, approved.stderr
    assert not (repo.root / "pwned").exists()
    assert log.read_text() == "--env staging --version v1.0.0\n"


def _shell_quote(text: str) -> str:
    import shlex

    return shlex.quote(text)


def test_list_filters_by_state_and_reads_a_store_without_proposals(repo: Repo) -> None:
    empty = repo.person("outbox", "list")
    assert empty.returncode == 0 and "no proposals" in empty.stdout
    assert json.loads(repo.person("outbox", "list", "--json").stdout) == []
    repo.agent_does(
        "git commit -q --allow-empty -m 'A'",
        "tether outbox propose push",
        "git branch side && tether outbox propose push --ref side:side",
    )
    assert repo.tether("run", "--prompt", "Work.").returncode == 0
    first, second = listing(_conn(repo))
    assert {first.state, second.state} == {"proposed"}
    repo.person("outbox", "reject", first.id, "--reason", "not now")
    waiting = json.loads(repo.person("outbox", "list", "--state", "proposed", "--json").stdout)
    assert [p["id"] for p in waiting] == [second.id]
    shown = repo.person("outbox", "show", first.id)
    assert "reason:" in shown.stdout and "not now" in shown.stdout
    assert git("branch", "--list", cwd=repo.remote) == "* main"
