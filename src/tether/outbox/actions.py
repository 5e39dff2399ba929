"""What approving a proposal carries out, derived by tether from the configuration and git.

One code path builds an ``Action`` for both sides: ``tether outbox propose``
inside the run (to refuse bad input at once) and the supervisor's collection
after the run (which trusts nothing of the agent's file but the kind, the named
parameters and, for a push, the commit it pinned). The argv is never given to
a shell.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tether.config import Config
from tether.config.outbox import BUILTIN_KINDS, PLACEHOLDER, KindSettings, OutboxSettings
from tether.outbox import git
from tether.outbox.errors import ProposalInputError, UnknownKindError

PUSH = "push"
MAX_VALUE = 200  # characters of one parameter's value
MAX_LISTED_COMMITS = 50  # a push lists at most this many of its commits
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


@dataclass(frozen=True)
class Action:
    kind: str
    params: dict[str, str]
    argv: list[str]
    cwd: Path
    headline: str
    timeout: float
    pinned: dict[str, Any] | None = None
    summary: str | None = None
    notes: list[str] = field(default_factory=list)  # said once at proposal time


def known_kinds(settings: OutboxSettings) -> list[str]:
    return [*BUILTIN_KINDS, *sorted(settings.kinds)]


def kind_settings(config: Config, name: str) -> tuple[OutboxSettings, KindSettings | None]:
    """The ``[outbox]`` settings and the kind's table (None for ``push``); unknown: exit 3."""
    settings = config.section("outbox", OutboxSettings)
    if name == PUSH:
        return settings, None
    kind = settings.kinds.get(name)
    if kind is None:
        raise UnknownKindError(name, known_kinds(settings))
    return settings, kind


# --- a project's own kinds --------------------------------------------------------


def parse_params(args: Sequence[str]) -> dict[str, str]:
    """``KEY=VALUE`` words as a mapping; anything else is refused (exit 2)."""
    params: dict[str, str] = {}
    for arg in args:
        key, sep, value = arg.partition("=")
        if not sep or not key:
            raise ProposalInputError(
                f"{arg!r} is not KEY=VALUE; a kind's parameters are given as name=value"
            )
        if key in params:
            raise ProposalInputError(f"parameter {key!r} is given twice")
        params[key] = value
    return params


def configured_action(config: Config, name: str, params: Mapping[str, str]) -> Action:
    """The argv of kind ``name`` with ``params`` checked by its rules and put in place."""
    settings, kind = kind_settings(config, name)
    assert kind is not None
    declared = kind.params
    unknown = sorted(set(params) - set(declared))
    if unknown:
        raise ProposalInputError(
            f"kind {name!r} has no parameter {unknown[0]!r}; its parameters: "
            f"{', '.join(sorted(declared)) or '(none)'}"
        )
    missing = sorted(set(declared) - set(params))
    if missing:
        raise ProposalInputError(
            f"kind {name!r} needs {', '.join(f'{m}=…' for m in missing)}"
            + _rule_hint(kind, missing[0])
        )
    for key, value in params.items():
        _check_value(name, kind, key, value)
    argv = [PLACEHOLDER.sub(lambda m: params[m.group(1)], part) for part in kind.command]
    shown = " ".join(f"{k}={v}" for k, v in sorted(params.items()))
    headline = (
        f"{name}"
        + (f" {shown}" if shown else "")
        + (f" ({kind.description})" if kind.description else "")
    )
    return Action(
        kind=name,
        params=dict(params),
        argv=argv,
        cwd=config.project_root,
        headline=headline,
        timeout=kind.timeout or settings.timeout,
    )


def _check_value(name: str, kind: KindSettings, key: str, value: str) -> None:
    rule = kind.params[key]
    where = f"parameter {key}={value!r} of kind {name!r}"
    if not value or len(value) > MAX_VALUE or _CONTROL.search(value):
        raise ProposalInputError(
            f"{where}: a value is 1 to {MAX_VALUE} characters, no control characters"
        )
    if value.startswith("-"):
        raise ProposalInputError(f"{where}: a value may not start with `-` (it could pass a flag)")
    if rule.choices is not None and value not in rule.choices:
        raise ProposalInputError(f"{where} is not allowed{_rule_hint(kind, key)}")
    if rule.pattern is not None and re.fullmatch(rule.pattern, value) is None:
        raise ProposalInputError(f"{where} is not allowed{_rule_hint(kind, key)}")


def _rule_hint(kind: KindSettings, key: str) -> str:
    rule = kind.params[key]
    if rule.choices is not None:
        return f" (one of: {', '.join(rule.choices)})"
    return f" (it must match {rule.pattern!r} as a whole)"


# --- the built-in push ------------------------------------------------------------


@dataclass(frozen=True)
class PushRequest:
    """What a push proposal asks for, before tether checks it against the repository."""

    remote: str | None = None
    src: str | None = None
    dst: str | None = None
    commit: str | None = None  # pinned already (collection); None: what SRC names now

    @classmethod
    def parse(cls, remote: str | None, ref: str | None) -> PushRequest:
        """``--remote`` and ``--ref SRC[:DST]`` as given to ``propose push``."""
        if ref is None:
            return cls(remote=remote)
        if ref.startswith("+"):
            raise ProposalInputError(
                f"--ref {ref!r}: a forced push is not a proposal tether carries out; "
                f"propose the commits as they are (a person can force-push themselves)"
            )
        if "*" in ref:
            raise ProposalInputError(f"--ref {ref!r}: give one ref, not a pattern")
        src, sep, dst = ref.partition(":")
        if not src:
            raise ProposalInputError(
                f"--ref {ref!r}: deleting a remote ref is not a proposal tether carries out"
            )
        if sep and not dst:
            raise ProposalInputError(f"--ref {ref!r}: DST after the colon is empty")
        return cls(remote=remote, src=src, dst=dst or None)


def push_action(config: Config, cwd: Path, request: PushRequest) -> Action:
    """A push of exactly one commit (and its ancestors) to one branch or tag of one remote."""
    settings = config.section("outbox", OutboxSettings)
    root = git.top_folder(cwd)
    if root is None:
        raise ProposalInputError(f"{cwd} is not in a git repository; there is nothing to push")
    src = request.src or git.current_branch(root)
    if src is None:
        raise ProposalInputError("HEAD is detached: say what to push with --ref SRC:DST")
    commit = git.commit_of(root, src)
    if commit is None:
        raise ProposalInputError(f"{src!r} does not name a commit in {root}")
    if request.commit is not None and (
        not _SHA.fullmatch(request.commit) or git.commit_of(root, request.commit) != request.commit
    ):
        raise ProposalInputError(f"the pinned commit {request.commit} is not in {root}")
    pinned = request.commit or commit
    dst = _destination(root, src, request.dst)
    remote = _remote(root, src, request.remote)
    url = git.push_url(root, remote)
    if url is None:
        raise ProposalInputError(f"no remote {remote!r} in {root}")
    commits = git.new_commits(root, pinned, remote, MAX_LISTED_COMMITS + 1)
    listed = commits[:MAX_LISTED_COMMITS]
    count = f"{len(listed)}{'+' if len(commits) > len(listed) else ''}"
    short_dst = dst.removeprefix("refs/heads/")
    headline = (
        f"push {count} commit{'' if count == '1' else 's'} ({pinned[:12]}) of {src} "
        f"to {remote} {short_dst}"
    )
    return Action(
        kind=PUSH,
        params={"remote": remote, "src": src, "dst": dst},
        argv=["git", "push", remote, f"{pinned}:{dst}"],
        cwd=root,
        headline=headline,
        timeout=settings.timeout,
        pinned={
            "commit": pinned,
            "src": src,
            "dst": dst,
            "remote": remote,
            "remote_url": url,
            "commits": [{"id": sha, "subject": subject} for sha, subject in listed],
        },
        summary=git.diff_stat(root, [sha for sha, _ in listed]),
        notes=[] if commits else [f"{remote} is already known to have {pinned[:12]}"],
    )


def _destination(root: Path, src: str, dst: str | None) -> str:
    if dst is None:
        if not git.is_branch(root, src):
            raise ProposalInputError(
                f"{src!r} is not a branch: say where it goes with --ref {src}:BRANCH"
            )
        dst = src
    full = dst if dst.startswith("refs/") else f"refs/heads/{dst}"
    if not full.startswith(("refs/heads/", "refs/tags/")) or not git.valid_ref(root, full):
        raise ProposalInputError(
            f"{dst!r} is not a branch or tag name a push can go to (refs/heads/… or refs/tags/…)"
        )
    return full


def _remote(root: Path, src: str, given: str | None) -> str:
    known = git.remotes(root)
    if given is not None:
        if given not in known:
            raise ProposalInputError(
                f"no remote {given!r} in {root}; known: {', '.join(known) or '(none)'}"
            )
        return given
    upstream = git.upstream_remote(root, src)
    if upstream in known:
        assert upstream is not None
        return upstream
    if "origin" in known:
        return "origin"
    if len(known) == 1:
        return known[0]
    raise ProposalInputError(
        f"say which remote with --remote NAME (known: {', '.join(known) or '(none)'})"
    )


def action_for(
    config: Config, cwd: Path, kind: str, params: Mapping[str, str], commit: str | None = None
) -> Action:
    """The action of a proposal as recorded (kind + named parameters [+ pinned commit])."""
    if kind == PUSH:
        unknown = set(params) - {"remote", "src", "dst"}
        if unknown:
            raise ProposalInputError(f"push has no parameter {sorted(unknown)[0]!r}")
        request = PushRequest(
            remote=params.get("remote"), src=params.get("src"), dst=params.get("dst"), commit=commit
        )
        return push_action(config, cwd, request)
    return configured_action(config, kind, params)
