"""Per-run hooks in the real CLIs, without touching the user's config files.

Codex 0.171.0: a ``PreToolUse`` hook given on the command line
(``-c hooks.PreToolUse=[…]``) runs only with ``--dangerously-bypass-hook-trust``;
a deny keeps the command from running, and the denied call leaves no item in
the ``--json`` stream although the model gets its result.
Pi 0.73.1: an extension loaded with ``-e FILE.ts`` can block a tool call
(``tool_call``) and stop the agent before its next model call
(``ctx.abort()`` in ``before_provider_request``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.real_harness

FIVE_STEP_COMMANDS = {"echo step 1", "echo step 2a", "echo step 2b", "echo step 3", "echo step 4"}
REASON = "refused by the test hook"


def codex_deny_hook(tmp_path: Path) -> tuple[Path, Path]:
    """A PreToolUse command hook that logs its payload and denies ``echo step 3``."""
    log = tmp_path / "hook-payloads.jsonl"
    script = tmp_path / "pre-tool-use.sh"
    deny = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": REASON,
        }
    }
    script.write_text(
        "#!/bin/bash\n"
        "payload=$(cat)\n"
        f"printf '%s\\n' \"$payload\" >> '{log}'\n"
        "if [[ $payload == *'\"echo step 3\"'* ]]; then\n"
        f"  printf '%s\\n' '{json.dumps(deny)}'\n"
        "fi\n"
    )
    script.chmod(0o755)
    return script, log


def codex_hook_args(script: Path) -> list[str]:
    hook = f'hooks.PreToolUse=[{{matcher="*",hooks=[{{type="command",command="{script}"}}]}}]'
    return ["--dangerously-bypass-hook-trust", "-c", hook]


def test_codex_per_run_pre_tool_use_hook_denies_a_call(
    run_agent: Callable[..., Any], tmp_path: Path
) -> None:
    script, log = codex_deny_hook(tmp_path)
    run = run_agent("codex", "five-steps", extra_args=codex_hook_args(script))
    why = run.explain()
    assert run.returncode == 0, why

    payloads = [json.loads(line) for line in log.read_text().splitlines()]
    served = {c.id for r in run.requests for c in r.tool_calls}
    assert len(payloads) == 5, why
    assert {p["hook_event_name"] for p in payloads} == {"PreToolUse"}
    # Codex names its exec_command tool "Bash" in hook payloads, Claude Code style
    assert {p["tool_name"] for p in payloads} == {"Bash"}
    assert {p["tool_input"]["command"] for p in payloads} == FIVE_STEP_COMMANDS
    assert {p["tool_use_id"] for p in payloads} == served
    assert {p["session_id"] for p in payloads} == {run.ledger.session_id}
    assert payloads[0]["transcript_path"] == str(run.session_file)

    # the model got a result for every call, the denied one included ...
    assert (run.summary.model_calls, run.summary.tool_calls_served) == (5, 5), why
    assert run.summary.tool_results_returned == 5, why
    # ... but the denied call has no item in the --json stream
    assert run.ledger.iterations == 5, why
    assert (run.ledger.tool_calls, run.ledger.tool_results) == (4, 4), why
    assert b"echo step 3" not in run.stdout
    assert f"blocked by PreToolUse hook: {REASON}".encode() in run.stderr


def test_codex_skips_untrusted_hooks_silently(
    run_agent: Callable[..., Any], tmp_path: Path
) -> None:
    script, log = codex_deny_hook(tmp_path)
    args = codex_hook_args(script)[1:]  # no --dangerously-bypass-hook-trust
    run = run_agent("codex", "five-steps", extra_args=args)
    assert run.returncode == 0, run.explain()
    assert not log.exists()
    assert (run.ledger.tool_calls, run.summary.tool_calls_served) == (5, 5)
    assert b"hook" not in run.stderr.lower()


PI_EXTENSION = """
export default function (pi: any) {
  let requests = 0;
  pi.on("tool_call", async (event: any) => {
    if (event.input?.command === "echo step 3") {
      return { block: true, reason: "%(reason)s" };
    }
  });
  pi.on("before_provider_request", async (_event: any, ctx: any) => {
    requests += 1;
    if (requests > %(limit)d) ctx.abort();
  });
}
"""


def pi_extension(tmp_path: Path, limit: int) -> Path:
    path = tmp_path / "tether-test-extension.ts"
    path.write_text(PI_EXTENSION % {"reason": REASON, "limit": limit})
    return path


@pytest.mark.parametrize("pi", ["pi", "pi-1"])
def test_pi_extension_blocks_a_tool_call(
    pi: str, run_agent: Callable[..., Any], tmp_path: Path
) -> None:
    ext = pi_extension(tmp_path, limit=1000)
    run = run_agent(pi, "five-steps", extra_args=["-e", str(ext)])
    why = run.explain()
    assert run.returncode == 0, why
    assert (run.summary.model_calls, run.summary.tool_calls_served) == (5, 5), why
    assert run.summary.tool_results_returned == 5, why
    # a blocked call still shows start and end in the stream, as an error result
    assert (run.ledger.iterations, run.ledger.tool_calls, run.ledger.tool_results) == (5, 5, 5)
    assert run.ledger.tool_errors == 1, why
    assert REASON.encode() in run.stdout


@pytest.mark.parametrize("pi", ["pi", "pi-1"])
def test_pi_extension_stops_before_the_next_model_call(
    pi: str, run_agent: Callable[..., Any], tmp_path: Path
) -> None:
    ext = pi_extension(tmp_path, limit=3)
    run = run_agent(pi, "forever", extra_args=["-e", str(ext)])
    why = run.explain()
    assert run.returncode == 0, why  # pi exits 0 after an abort
    # exact: the fourth model request was never sent
    assert (run.summary.model_calls, run.summary.tool_calls_served) == (3, 3), why
    assert (run.ledger.tool_calls, run.ledger.tool_results) == (3, 3), why
    assert b'"stopReason":"aborted"' in run.stdout
    assert run.ledger.iterations == 3, why
