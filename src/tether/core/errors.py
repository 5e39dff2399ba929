"""The error tree. Every error says what happened and what to do next.

Only ``tether.cli`` (and the gate hook, which has its own stdlib-only copy of its
few messages) turns these into exit codes.

``difflib`` (the "did you mean" of an unknown name) is imported only when such
an error is made: nearly every tether process imports this module.
"""

from __future__ import annotations

from collections.abc import Sequence

from tether.core.exit_codes import ExitCode


class TetherError(Exception):
    """Root of every error tether raises on purpose."""

    exit_code: ExitCode = ExitCode.INTERNAL_ERROR


class UsageError(TetherError):
    exit_code = ExitCode.USAGE


class CheckFailedError(TetherError):
    """A check (wiki check, a room's conclusion) found violations."""

    exit_code = ExitCode.CHECK_FAILED


class ConfigError(TetherError):
    """A configuration file, key, profile or budget is not acceptable."""

    exit_code = ExitCode.CONFIG

    def __init__(self, message: str, *, key: str | None = None, path: str | None = None) -> None:
        super().__init__(message)
        self.key = key
        self.path = path


class UnknownNameError(ConfigError):
    """A name (profile, harness, ...) that is not among the known ones."""

    def __init__(self, what: str, name: str, known: Sequence[str], advice: str = "") -> None:
        from difflib import get_close_matches

        hint = get_close_matches(name, list(known), n=1)
        suggestion = f" Did you mean {hint[0]!r}?" if hint else ""
        known_text = ", ".join(sorted(known)) or "(none configured)"
        tail = f" {advice}" if advice else ""
        super().__init__(
            f"unknown {what} {name!r}.{suggestion} Known: {known_text}.{tail}", key=what
        )
        self.name = name
        self.known = tuple(known)


class BudgetError(ConfigError):
    """A requested budget is above the configured cap or otherwise invalid."""


class HarnessNotFoundError(TetherError):
    exit_code = ExitCode.HARNESS_NOT_FOUND

    def __init__(self, harness: str, executable: str) -> None:
        super().__init__(
            f"harness {harness!r}: executable {executable!r} was not found on PATH. "
            f"Install it, or point the profile at another harness."
        )
        self.harness = harness
        self.executable = executable


class PathEscapeError(TetherError):
    """A user-given path resolves outside the root it must stay in."""

    exit_code = ExitCode.USAGE

    def __init__(self, given: str, root: str) -> None:
        super().__init__(
            f"path {given!r} resolves outside {root} (symlinks followed); "
            f"give a path inside that folder."
        )
        self.given = given
        self.root = root


class StoreError(TetherError):
    """The state database could not be opened or migrated (a bad file: exit 3)."""

    exit_code = ExitCode.CONFIG


class RunNotFoundError(TetherError):
    exit_code = ExitCode.USAGE

    def __init__(self, run_id: str) -> None:
        super().__init__(f"no run {run_id!r}; `tether runs list` shows the known runs.")
        self.run_id = run_id
