"""Point a real agent CLI at the scripted model server, inside a throwaway HOME.

:func:`client_setup` writes the CLI's own config files under ``home`` and
returns the environment and flags it needs to talk to ``127.0.0.1:<port>``
headless and offline, with no login. Nothing outside ``home`` is touched. The
settings are the ones the CLIs were recorded with (tests/transcripts/README.md):

========== ===================================================================
codex      ``$CODEX_HOME/config.toml``: provider ``mock`` (``wire_api =
           "responses"``, ``base_url = http://127.0.0.1:<port>/v1``, key from
           ``MOCK_API_KEY``, retries off); model ``mock-model``
claude-code ``ANTHROPIC_BASE_URL=http://127.0.0.1:<port>``, ``ANTHROPIC_API_KEY``,
           ``CLAUDE_CONFIG_DIR``, ``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1``,
           ``DISABLE_AUTOUPDATER=1``; ``--model mock-model --allowedTools Bash``
pi         ``$PI_CODING_AGENT_DIR/models.json``: provider ``mock`` (``api =
           "openai-completions"``); ``PI_OFFLINE=1``; ``--provider mock --model
           mock-model``
copilot    ``COPILOT_PROVIDER_BASE_URL=http://127.0.0.1:<port>/v1``,
           ``COPILOT_PROVIDER_TYPE=openai``, ``COPILOT_PROVIDER_API_KEY``,
           ``COPILOT_MODEL``, ``COPILOT_OFFLINE=true``, ``COPILOT_HOME``;
           ``--allow-all-tools --no-ask-user``
vibe       ``$VIBE_HOME/config.toml``: provider ``mock`` (``api_style =
           "openai"``, ``api_base = http://127.0.0.1:<port>/v1``, key from
           ``MOCK_API_KEY``), model ``mock-model`` with alias ``mock`` (priced
           at 1 and 2 USD per million input and output tokens) as
           ``active_model``; ``--auto-approve --trust``
========== ===================================================================
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

MODEL = "mock-model"
API_KEY = "sk-test"
HARNESSES = ("codex", "claude-code", "pi", "copilot", "vibe")
# Vibe names models by alias; its prices make --max-price and the cost count testable.
VIBE_ALIAS = "mock"
VIBE_INPUT_PRICE = 1.0
VIBE_OUTPUT_PRICE = 2.0


@dataclass(frozen=True)
class ClientSetup:
    """How to run one CLI against the scripted server.

    ``env`` is to be laid over a minimal environment (keep ``PATH``; do not pass
    your own API keys or config dirs along). ``extra_args`` are flags beyond
    what ``Harness.build_command`` makes: the provider, permissions for the
    shell tool. ``model`` goes to ``RunSpec.model`` (``None``: set by config).
    """

    harness: str
    home: Path
    env: dict[str, str]
    extra_args: tuple[str, ...] = ()
    model: str | None = MODEL
    config_files: tuple[Path, ...] = field(default_factory=tuple)
    # the part of ``extra_args`` that only grants tool permissions (a run with its
    # own allow-list leaves it out)
    permission_args: tuple[str, ...] = ()

    @property
    def args_without_permissions(self) -> tuple[str, ...]:
        return tuple(a for a in self.extra_args if a not in self.permission_args)


def client_setup(harness: str, home: Path, port: int) -> ClientSetup:
    """Write ``harness``'s config under ``home`` for the server on ``port``."""
    try:
        make = _SETUPS[harness]
    except KeyError:
        raise ValueError(
            f"no offline setup for harness {harness!r}; known: {', '.join(HARNESSES)}"
        ) from None
    home.mkdir(parents=True, exist_ok=True)
    return make(home, port)


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _codex(home: Path, port: int) -> ClientSetup:
    codex_home = home / ".codex"
    config = _write(
        codex_home / "config.toml",
        f'model = "{MODEL}"\n'
        'model_provider = "mock"\n'
        "\n"
        "[model_providers.mock]\n"
        'name = "Mock"\n'
        f'base_url = "http://127.0.0.1:{port}/v1"\n'
        'env_key = "MOCK_API_KEY"\n'
        'wire_api = "responses"\n'
        "request_max_retries = 0\n"
        "stream_max_retries = 0\n",
    )
    env = {"HOME": str(home), "CODEX_HOME": str(codex_home), "MOCK_API_KEY": API_KEY}
    return ClientSetup(
        "codex",
        home,
        env,
        ("--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox"),
        model=None,
        config_files=(config,),
    )


def _claude_code(home: Path, port: int) -> ClientSetup:
    env = {
        "HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}",
        "ANTHROPIC_API_KEY": API_KEY,
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
    }
    grant = ("--allowedTools", "Bash")
    return ClientSetup("claude-code", home, env, grant, permission_args=grant)


def _pi(home: Path, port: int) -> ClientSetup:
    agent_dir = home / ".pi" / "agent"
    provider = {
        "baseUrl": f"http://127.0.0.1:{port}/v1",
        "api": "openai-completions",
        "apiKey": API_KEY,
        "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
        "models": [
            {"id": MODEL, "name": "Mock Model", "contextWindow": 128000, "maxTokens": 16384}
        ],
    }
    models = _write(agent_dir / "models.json", json.dumps({"providers": {"mock": provider}}))
    env = {"HOME": str(home), "PI_CODING_AGENT_DIR": str(agent_dir), "PI_OFFLINE": "1"}
    return ClientSetup("pi", home, env, ("--provider", "mock"), config_files=(models,))


def _copilot(home: Path, port: int) -> ClientSetup:
    env = {
        "HOME": str(home),
        "COPILOT_HOME": str(home / ".copilot"),
        "COPILOT_PROVIDER_BASE_URL": f"http://127.0.0.1:{port}/v1",
        "COPILOT_PROVIDER_TYPE": "openai",
        "COPILOT_PROVIDER_API_KEY": API_KEY,
        "COPILOT_MODEL": MODEL,
        "COPILOT_OFFLINE": "true",
    }
    grant = ("--allow-all-tools",)
    return ClientSetup(
        "copilot", home, env, (*grant, "--no-ask-user"), model=None, permission_args=grant
    )


def _vibe(home: Path, port: int) -> ClientSetup:
    vibe_home = home / ".vibe"
    config = _write(
        vibe_home / "config.toml",
        f'active_model = "{VIBE_ALIAS}"\n'
        "\n"
        "[[providers]]\n"
        'name = "mock"\n'
        f'api_base = "http://127.0.0.1:{port}/v1"\n'
        'api_key_env_var = "MOCK_API_KEY"\n'
        'api_style = "openai"\n'
        'backend = "generic"\n'
        "\n"
        "[[models]]\n"
        f'name = "{MODEL}"\n'
        'provider = "mock"\n'
        f'alias = "{VIBE_ALIAS}"\n'
        f"input_price = {VIBE_INPUT_PRICE}\n"
        f"output_price = {VIBE_OUTPUT_PRICE}\n",
    )
    env = {"HOME": str(home), "VIBE_HOME": str(vibe_home), "MOCK_API_KEY": API_KEY}
    return ClientSetup(
        "vibe",
        home,
        env,
        ("--auto-approve", "--trust"),
        model=None,
        config_files=(config,),
        permission_args=("--auto-approve",),
    )


_SETUPS: dict[str, Callable[[Path, int], ClientSetup]] = {
    "codex": _codex,
    "claude-code": _claude_code,
    "pi": _pi,
    "copilot": _copilot,
    "vibe": _vibe,
}
