"""What the gate and the supervisor of a ``tether run`` tell each other through the run folder.

Two small files, written once each:

- ``refused.json``: the gate refused a tool call of the run. Written by the gate
  on the first refusal (exclusive create, so later refusals never overwrite the
  first); the supervisor watches for it and ends the run at once as
  ``tool_call_limit``, and the report names the call. Some harnesses (Codex)
  leave a refused call out of their event stream entirely, so the stream alone
  would never show it.
- ``stopping``: the supervisor is stopping the run. From then on every path of
  the gate that would let a call through uncounted (a damaged payload, a broken
  database, its own bug) refuses instead, and so does the Pi extension when
  the gate gives no answer: a stop in progress never turns into an allow.

Standard library only: the gate imports this on every refusal.
"""

from __future__ import annotations

import os
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

REFUSED_FILE = "refused.json"
STOPPING_FILE = "stopping"
RUN_ID_ENV = "TETHER_RUN_ID"


def run_dir(home: str, environ: Mapping[str, str] | None = None) -> str | None:
    """The folder of the run this process belongs to, or None outside ``tether run``."""
    env = os.environ if environ is None else environ
    run_id = env.get(RUN_ID_ENV, "")
    if not run_id or "/" in run_id or run_id.startswith(".") or "\0" in run_id:
        return None
    path = os.path.join(home, "runs", run_id)
    return path if os.path.isdir(path) else None


def stopping(home: str, environ: Mapping[str, str] | None = None) -> bool:
    """True while the supervisor of this process's run is stopping it."""
    folder = run_dir(home, environ)
    return folder is not None and os.path.exists(os.path.join(folder, STOPPING_FILE))


def mark_stopping(folder: str) -> None:
    """Called by the supervisor before it signals the agent."""
    with open(os.path.join(folder, STOPPING_FILE), "a", encoding="utf-8"):
        pass


class RefusedCall:
    """A call the gate refused, as it is written for the run's supervisor."""

    __slots__ = (
        "call_budget",
        "calls_used",
        "harness",
        "reason",
        "tool_input",
        "tool_name",
        "tool_use_id",
    )

    def __init__(
        self,
        harness: str,
        tool_name: str | None,
        tool_use_id: str | None,
        tool_input: str | None,
        calls_used: int,
        call_budget: int,
        reason: str,
    ) -> None:
        self.harness = harness
        self.tool_name = tool_name
        self.tool_use_id = tool_use_id
        self.tool_input = tool_input
        self.calls_used = calls_used
        self.call_budget = call_budget
        self.reason = reason


def record_refusal(home: str, call: RefusedCall, environ: Mapping[str, str] | None = None) -> None:
    """Leave the first refused call of the run where its supervisor looks for it."""
    folder = run_dir(home, environ)
    if folder is None:
        return
    record = {
        "tool": call.tool_name,
        "tool_use_id": call.tool_use_id,
        "input": call.tool_input,
        "harness": call.harness,
        "calls_used": call.calls_used,
        "call_budget": call.call_budget,
        "reason": call.reason,
        "at": time.time(),
    }
    import json  # only on a refusal: the allowed path stays free of it

    path = os.path.join(folder, REFUSED_FILE)
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        with open(tmp, "w", encoding="utf-8") as handle:
            handle.write(json.dumps(record, sort_keys=True))
        # link() fails when the file exists: the first refusal stays the one named.
        os.link(tmp, path)
    except OSError:
        pass
    finally:
        try:  # noqa: SIM105 - contextlib costs an import on every refusal
            os.unlink(tmp)
        except OSError:
            pass


class Refusal:
    """The refused call as ``refused.json`` holds it (a field of the wrong type reads as None)."""

    __slots__ = (
        "at",
        "call_budget",
        "calls_used",
        "harness",
        "reason",
        "tool",
        "tool_input",
        "tool_use_id",
    )

    def __init__(self, data: dict[str, object]) -> None:
        self.tool = _text(data.get("tool"))
        self.tool_use_id = _text(data.get("tool_use_id"))
        self.tool_input = _text(data.get("input"))  # JSON as the gate recorded it, maybe cut
        self.harness = _text(data.get("harness"))
        self.calls_used = _int(data.get("calls_used"))
        self.call_budget = _int(data.get("call_budget"))
        self.reason = _text(data.get("reason"))
        at = data.get("at")
        self.at = float(at) if isinstance(at, int | float) and not isinstance(at, bool) else None


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def read_refusal(folder: str) -> Refusal | None:
    """The refused call the gate recorded for the run in ``folder``, if any."""
    import json

    try:
        with open(os.path.join(folder, REFUSED_FILE), encoding="utf-8") as handle:
            data = json.loads(handle.read())
    except (OSError, ValueError):
        return None
    return Refusal(data) if isinstance(data, dict) and data else None
