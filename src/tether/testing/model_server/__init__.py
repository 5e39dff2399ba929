"""A scripted model server for running real agent CLIs offline.

It speaks the wire protocols the CLIs use (OpenAI Responses for Codex, OpenAI
Chat Completions for Pi and Copilot, Anthropic Messages for Claude Code), plays
a scenario of model steps with shell tool calls, and logs every request, so a
test can compare what a harness reported with what the model side saw.

In-process::

    from tether.testing.model_server import ModelServer

    with ModelServer("steps:7") as server:
        ...  # run a CLI configured with client_setup(...) against server.port
        print(server.summary())

As a process: ``python -m tether.testing.model_server --scenario five-steps``
prints the bound port on its first stdout line. See docs/how-to/test-offline.md.
"""

from tether.testing.model_server.clients import ClientSetup, client_setup
from tether.testing.model_server.embeddings import ScriptedEmbeddings
from tether.testing.model_server.request_log import (
    LogSummary,
    RequestRecord,
    ServedCallRecord,
    read_log,
    summarize,
)
from tether.testing.model_server.scenario import (
    FinalText,
    Scenario,
    ShellCalls,
    next_step,
    parse_scenario,
)
from tether.testing.model_server.server import ModelServer

__all__ = [
    "ClientSetup",
    "FinalText",
    "LogSummary",
    "ModelServer",
    "RequestRecord",
    "Scenario",
    "ScriptedEmbeddings",
    "ServedCallRecord",
    "ShellCalls",
    "client_setup",
    "next_step",
    "parse_scenario",
    "read_log",
    "summarize",
]
