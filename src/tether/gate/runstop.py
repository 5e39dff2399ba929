"""What the gate and the supervisor of a ``tether run`` tell each other through the run folder.

Two small files, written once each:

- ``refused.json``: the gate refused a tool call of the run. Written by the gate
  on the first refusal (exclusive create, so later refusals never overwrite the
  first); the supervisor watches for it and ends the run at once, as
  ``tool_call_limit``, or as ``iteration_limit`` when the call belonged to a
  model step past the iteration limit (``reason``), and the report names the
  call. Some harnesses (Codex) leave a refused call out of their event stream
  entirely, so the stream alone would never show it. A call refused because
  the run was already being stopped, or because the supervisor had not read it
  from the agent's stream in time (``gate/stream_mark.py``), is recorded the
  same way with its own reason, and ends nothing by itself: the supervisor
  stops the run for what its own limits say.
- ``stopping``: the supervisor is stopping the run, and why (the run's stop
  status). From then on every path of the gate that would let a call through
  uncounted (a damaged payload, a broken database, its own bug) refuses
  instead, and so does the Pi extension when the gate gives no answer: a stop
  in progress never turns into an allow. A refusal then names the stop, not a
  spent call budget (the stop's lock shrinks the budget to the calls used).

Standard library only: the gate imports this on every refusal.
"""

from __future__ import annotations

import os
import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

REFUSED_FILE = "refused.json"
# Why the gate refused: the call budget is spent, or the call belongs to a model
# step past the run's iteration limit (the run then ends as iteration_limit), or
# the run was being stopped (``stop``: for what), or the supervisor had not read
# the call from the agent's stream in time (the gate lets no unread call through).
CALL_BUDGET_SPENT = "call budget spent"
PAST_ITERATION_LIMIT = "iteration limit reached"
RUN_STOPPING = "run stopping"
SUPERVISOR_BEHIND = "supervisor behind"
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


def mark_stopping(folder: str, cause: str = "") -> None:
    """Called by the supervisor before it signals the agent; ``cause`` is the run's
    stop status (``iteration_limit``, ...). The first mark stays: the file appears
    with its cause in it, so a gate that sees it reads the cause too."""
    path = os.path.join(folder, STOPPING_FILE)
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        with open(tmp, "w", encoding="utf-8") as handle:
            handle.write(cause)
        os.link(tmp, path)
    except FileExistsError:
        pass
    except OSError:
        # no hard links here: the mark without its cause is the mark all the same
        with open(path, "a", encoding="utf-8"):
            pass
    finally:
        try:  # noqa: SIM105 - contextlib costs an import on the gate's path
            os.unlink(tmp)
        except OSError:
            pass


def stop_cause(folder: str) -> str | None:
    """Why the run of ``folder`` is being stopped ("" when the supervisor did not
    say), or None while it is not."""
    try:
        with open(os.path.join(folder, STOPPING_FILE), encoding="utf-8") as handle:
            return handle.read(64).strip()
    except FileNotFoundError:
        return None
    except OSError:
        return ""  # there but unreadable: stopping all the same


class RefusedCall:
    """A call the gate refused, as it is written for the run's supervisor."""

    __slots__ = (
        "call_budget",
        "calls_used",
        "harness",
        "iteration_budget",
        "reason",
        "step",
        "stop",
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
        step: int | None = None,
        iteration_budget: int | None = None,
        stop: str | None = None,
    ) -> None:
        self.harness = harness
        self.tool_name = tool_name
        self.tool_use_id = tool_use_id
        self.tool_input = tool_input
        self.calls_used = calls_used
        self.call_budget = call_budget
        self.reason = reason
        self.step = step  # the model step the call belongs to (a step past the limit)
        self.iteration_budget = iteration_budget
        self.stop = stop  # the run's stop status, for a call refused while it stopped

    def past(self, step: int, iteration_budget: int) -> str:
        """Make this the refusal of a call of model step ``step``, past the iteration
        limit; the refusal's text."""
        from tether.gate.messages import past_iterations

        self.reason = PAST_ITERATION_LIMIT
        self.step, self.iteration_budget = step, iteration_budget
        return past_iterations(step, iteration_budget)

    def while_stopping(self, cause: str) -> str:
        """Make this the refusal of a call made while the run was being stopped for
        ``cause`` (its stop status, "" when not known); the refusal's text."""
        from tether.gate.messages import run_stopping

        self.reason, self.stop = RUN_STOPPING, cause or None
        return run_stopping(cause)


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
        "step": call.step,
        "iteration_budget": call.iteration_budget,
        "stop": call.stop,
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
        "iteration_budget",
        "reason",
        "step",
        "stop",
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
        self.step = _int(data.get("step"))
        self.iteration_budget = _int(data.get("iteration_budget"))
        self.stop = _text(data.get("stop"))  # the run's stop status (reason RUN_STOPPING)
        at = data.get("at")
        self.at = float(at) if isinstance(at, int | float) and not isinstance(at, bool) else None

    @property
    def past_iterations(self) -> bool:
        """The call was refused for the iteration limit, not the call budget."""
        return self.reason == PAST_ITERATION_LIMIT


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


# How long the gate keeps back its refusal of a call past the iteration limit
# while it waits for the run's stop (well inside the harness's hook timeout).
HOLD_S = 10.0
_HOLD_STEP_S = 0.01
_PR_SET_PDEATHSIG = 1


# Harnesses whose hook is the CLI's own child (so a held gate ends only with the
# CLI) and which end on SIGTERM while a hook is pending (checked: Codex 0.171,
# Copilot CLI 1.0.102): while their run stops, every refusal is held too, so an
# agent not yet gone cannot turn it into one more model request.
HOLD_WHILE_STOPPING = frozenset({"codex", "copilot"})


def holds_while_stopping(harness: str, home: str, environ: Mapping[str, str]) -> bool:
    """Whether a refusal of ``harness``'s call is held because its run is stopping."""
    return harness in HOLD_WHILE_STOPPING and stopping(home, environ)


def hold_if_supervised(home: str, environ: Mapping[str, str]) -> bool:
    """Hold (``hold_until_stopped``) when a supervisor watches this process's run."""
    if run_dir(home, environ) is not None:
        hold_until_stopped()
    return False


def hold_until_stopped(timeout: float | None = None) -> None:
    """Keep back the answer to a refused call until the agent that asked is gone.

    A harness that cannot be ended between model calls by a hook (Codex) asks
    the model again as soon as a refusal arrives. While the hook has not
    answered, it waits, and the supervisor, which watches ``refused.json``,
    stops it meanwhile: the agent is gone (and this process has a new parent)
    before it could send that request. After ``timeout`` the refusal goes out
    anyway (a run whose supervisor is not watching must not hang).
    """
    parent = os.getppid()
    _die_with_parent()
    deadline = time.monotonic() + (HOLD_S if timeout is None else timeout)
    while os.getppid() == parent and time.monotonic() < deadline:
        time.sleep(_HOLD_STEP_S)


def _die_with_parent() -> None:
    """On Linux, end this process the moment its parent ends (``PR_SET_PDEATHSIG``).

    Polling alone notices the agent's end a few milliseconds late, and a sandbox
    that lists what outlived its agent right then would name the gate as such.
    """
    if not sys.platform.startswith("linux"):
        return
    import ctypes  # only a held refusal pays for it
    import signal

    try:  # noqa: SIM105 - contextlib costs an import
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL))
    except (OSError, AttributeError):
        pass


def read_refusal(folder: str) -> Refusal | None:
    """The refused call the gate recorded for the run in ``folder``, if any."""
    import json

    try:
        with open(os.path.join(folder, REFUSED_FILE), encoding="utf-8") as handle:
            data = json.loads(handle.read())
    except (OSError, ValueError):
        return None
    return Refusal(data) if isinstance(data, dict) and data else None
