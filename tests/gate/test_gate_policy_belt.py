"""The gate's command policy as a second belt where no sandbox is the wall.

Real ``tether-gate hook`` processes with Claude Code's PreToolUse payload, real
git repositories (a ``git worktree`` checkout among them). Without a policy
file, or with one that is missing or unreadable, the built-in rules apply;
``TETHER_POLICY=off`` and the sandbox (its gate socket named in the agent's
environment) switch the belt off.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.gate.gate_support import run_gate

PROTECTED = "push-protected"


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(
        ["git", "-c", "user.name=T", "-c", "user.email=t@example.org", *args],
        cwd=cwd,
        capture_output=True,
        check=True,
        timeout=60,
    )


@pytest.fixture
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    _git("init", "-b", "main", cwd=folder)
    _git("commit", "--allow-empty", "-m", "first", cwd=folder)
    return folder


def _decide(
    gate: str, env: dict[str, str], command: str, cwd: Path, session: str = "s-belt"
) -> str | None:
    """The rule the gate refused ``command`` by, or None when it let it through."""
    payload = {
        "hook_event_name": "PreToolUse",
        "session_id": session,
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "tool_use_id": f"toolu_{abs(hash(command))}",
        "cwd": str(cwd),
    }
    done = run_gate(gate, ["hook", "--harness", "claude-code"], env, json.dumps(payload), cwd)
    assert done.returncode == 0, done.stderr
    out = done.stdout.decode().strip()
    if not out:
        return None
    reason: str = json.loads(out)["hookSpecificOutput"]["permissionDecisionReason"]
    assert "tether outbox propose" in reason, reason
    return reason.split("(rule `", 1)[1].split("`", 1)[0]


Env = Callable[..., dict[str, Any]]


@pytest.mark.parametrize(
    ("command", "rule"),
    [
        ("git push origin main", PROTECTED),
        ("git push", PROTECTED),  # the current branch is main
        ('bash -c "git push origin main"', PROTECTED),
        ("sh -c 'cd . && git push origin HEAD'", PROTECTED),
        ("git -c alias.p=push p origin main", PROTECTED),
        ("git push origin +refs/heads/*:refs/heads/*", PROTECTED),
        ("git push --mirror origin", PROTECTED),
        ("env GIT_TRACE=0 git push origin main", PROTECTED),
        ("git push origin feature", None),
        (
            "python3 -c \"import subprocess; subprocess.run(['kubectl', 'apply', '-f', 'k8s/'])\"",
            "deploy",
        ),
        ("kubectl apply -f k8s/", "deploy"),
        ("./scripts/deploy.sh production", "deploy"),
        ("npm run deploy", "deploy"),
        ("npm publish --access public", "publish"),
        ("find /tmp/elsewhere -delete", "delete-outside"),
        ("find .. -name '*.log' -exec rm {} +", "delete-outside"),
        ("rm -rf ../sibling", "rm-outside"),
        ("find build -delete", None),
        ("rm -rf build", None),
        ("ls deploy/", None),
        ("cat docs/deploy.md", None),
        ("git log --oneline", None),
    ],
)
def test_without_a_policy_file_the_built_in_rules_apply(
    gate_exe: str, env_for: Env, work: Path, command: str, rule: str | None
) -> None:
    assert _decide(gate_exe, env_for(), command, work) == rule


def test_a_missing_or_unreadable_policy_file_means_the_built_in_rules(
    gate_exe: str, env_for: Env, work: Path, tmp_path: Path
) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    for path in (tmp_path / "gone.json", broken, tmp_path):
        env = env_for(TETHER_POLICY=str(path))
        assert _decide(gate_exe, env, "git push origin main", work) == PROTECTED, path


def test_off_and_inside_the_sandbox_the_belt_is_not_checked(
    gate_exe: str, env_for: Env, work: Path
) -> None:
    from tether.gate.command_policy import check

    assert _decide(gate_exe, env_for(TETHER_POLICY="off"), "git push origin main", work) is None
    payload: dict[str, object] = {
        "tool_input": {"command": "git push origin main"},
        "cwd": str(work),
    }
    inside = {"TETHER_GATE_SOCKET": "/run/tether/gate.sock"}  # a sandboxed run's agent
    assert check(payload, inside) is None
    refused = check(payload, {})
    assert refused is not None and "(rule `push-protected`)" in refused


def test_the_protected_branch_is_found_in_a_git_worktree_checkout(
    gate_exe: str, env_for: Env, work: Path, tmp_path: Path
) -> None:
    _git("branch", "release", cwd=work)
    _git("checkout", "-q", "-b", "side", cwd=work)
    linked = tmp_path / "linked"
    _git("worktree", "add", "-q", str(linked), "main", cwd=work)
    assert (linked / ".git").is_file()  # a worktree's .git is a file
    assert _decide(gate_exe, env_for(), "git push", linked) == PROTECTED
    assert _decide(gate_exe, env_for(), "git push origin HEAD", linked) == PROTECTED
    assert _decide(gate_exe, env_for(), "git push", work) is None  # there: side
    assert _decide(gate_exe, env_for(), f"git -C {linked} push", work) == PROTECTED
