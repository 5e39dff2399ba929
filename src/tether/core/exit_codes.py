"""The one table of process exit codes (documented in docs/reference/exit-codes.md)."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    INTERNAL_ERROR = 1
    USAGE = 2
    CONFIG = 3
    HARNESS_NOT_FOUND = 4
    LOOP_STOP_EXHAUSTED = 10
    LOOP_STOP_BLIND = 11
    LOOP_STOP_GUARD_EXHAUSTED = 12
    LOOP_STOP_GUARD_BLIND = 13
    LOOP_STOP_USER_ONLY = 14
    RUN_ITERATION_LIMIT = 20
    RUN_TOOL_CALL_LIMIT = 21
    RUN_TIMEOUT = 22
    RUN_HARNESS_FAILED = 23
    RUN_CANCELLED = 24
    RUN_TOKEN_LIMIT = 25
    RUN_COST_LIMIT = 26
    RUN_OUTPUT_LIMIT = 27
    GATE_REFUSED = 30
    CHECK_FAILED = 40
    HUMAN_STOP = 41
