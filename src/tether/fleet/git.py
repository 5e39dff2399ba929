"""A fleet unit's git: one clone per project and worker, a commit, an idempotent push.

The clone is kept between units and brought to the branch's head with a fetch
(never a fresh clone per unit). A unit's commit carries the trailer
``Tether-Fleet-Unit: <workflow id>``: a push repeated after a crash finds the
unit's commit on the remote (rebased or not) and does nothing. A worker that
did not make the commit (it took the unit over) gets it from the bundle the
unit's step returned, so no disk is shared. A push that is rejected because
someone else moved the branch is rebased; a rebase that conflicts is never
forced: the project stops with the reason, for a person to resolve.

Errors are plain exceptions with one message (picklable across DBOS steps):
``TransientGitError`` for what a retry may cure (network, timeouts, locks),
``GitError`` for the rest.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

GIT_TIMEOUT = 600.0  # a first clone of a large repository
AUTHOR = ("tether fleet", "tether-fleet@localhost")
TRAILER = "Tether-Fleet-Unit"
# remote history searched for a unit's commit before pushing it again
SEARCH_DEPTH = 200
# in a kept clone's .git: the repository it was cloned from (a project re-added elsewhere)
ORIGIN_MARKER = "tether-fleet-origin"
# in a kept clone's .git: the unit that may start without a fetch, and the head it finds
# (``keep_for``); read and removed by that unit's ``prepare_clone``
KEPT_MARKER = "tether-fleet-kept"
# every fetch and commit would start ``git maintenance run --auto`` (one more process per
# command); a unit's fetch and commit leave it out, and a unit that changed nothing (the
# project goes idle) runs it once instead, so the kept clone is still packed in time
NO_AUTO_MAINTENANCE = ("-c", "maintenance.auto=false")

_TRANSIENT = (
    "could not resolve host",
    "connection refused",
    "connection timed out",
    "connection reset",
    "timed out",
    "early eof",
    "the remote end hung up",
    "rpc failed",
    "unable to access",
    "temporary failure",
    "index.lock",
    "cannot lock ref",
    "503",
    "502",
)


class GitError(Exception):
    """A git command failed in a way a retry would not cure."""


class TransientGitError(GitError):
    """A git command failed in a way a retry may cure (network, timeout, lock)."""


class PushConflictError(GitError):
    """The branch moved and the unit's commit does not rebase cleanly onto it."""


def git_env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        GIT_AUTHOR_NAME=AUTHOR[0],
        GIT_AUTHOR_EMAIL=AUTHOR[1],
        GIT_COMMITTER_NAME=AUTHOR[0],
        GIT_COMMITTER_EMAIL=AUTHOR[1],
        GIT_TERMINAL_PROMPT="0",
    )
    return env


def git(cwd: Path, *args: str, timeout: float = GIT_TIMEOUT) -> str:
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            env=git_env(),
        )
    except subprocess.TimeoutExpired:
        raise TransientGitError(f"git {args[0]}: timed out after {timeout:.0f} s") from None
    if done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().splitlines()
        said = [ln for ln in lines if ln.startswith(("fatal:", "error:"))] or lines[-1:]
        message = f"git {args[0]}: {said[0] if said else f'exit {done.returncode}'}"
        text = (done.stderr or "").lower()
        raise (TransientGitError if any(t in text for t in _TRANSIENT) else GitError)(message)
    return done.stdout.strip()


def check_remote(repo: str, branch: str, timeout: float = 60.0) -> None:
    """``GitError`` unless ``repo`` answers and has ``branch`` (``git ls-remote``)."""
    cwd = Path(tempfile.gettempdir())
    try:
        found = git(cwd, "ls-remote", "--heads", repo, branch, timeout=timeout)
    except GitError as exc:
        raise GitError(f"cannot read repository {repo}: {exc}") from None
    if not any(line.endswith(f"refs/heads/{branch}") for line in found.splitlines()):
        raise GitError(f"repository {repo} has no branch {branch!r}")


def prepare_clone(folder: Path, repo: str, branch: str, *, kept_for: str | None = None) -> str:
    """``folder`` as a clean checkout of the branch's head (fetched, or cloned once).

    Returns the head's commit. Whatever an earlier unit left there (its work
    was committed and pushed, or its run was recovered from its events) is
    reset away. ``kept_for``: the unit asking; when the unit before it left
    the clone for it (``keep_for``) and the clone is still at that head, the
    fetch and checkout are left out (only the clean runs).
    """
    if has_clone(folder, repo):
        kept = _take_kept(folder, branch, kept_for)
        if kept is not None:
            git(folder, "clean", "-ffdxq")
            return kept
        _fetch(folder, branch, GIT_TIMEOUT)
        git(folder, "checkout", "--quiet", "--force", "-B", branch, _remote_ref(branch))
        git(folder, "clean", "-ffdxq")
        return _fetched(folder) or git(folder, "rev-parse", "HEAD")
    shutil.rmtree(folder, ignore_errors=True)
    if clone_once(folder, repo, branch):
        return git(folder, "rev-parse", "HEAD")
    if not has_clone(folder, repo):
        raise GitError(f"cannot clone into {folder}: something else is there")
    return prepare_clone(folder, repo, branch)  # cloned ahead by a unit in hand meanwhile


def has_clone(folder: Path, repo: str) -> bool:
    """Whether ``folder`` is a kept clone of ``repo``."""
    marker = folder / ".git" / ORIGIN_MARKER
    try:
        return marker.read_text(encoding="utf-8") == repo
    except OSError:
        return False


def clone_once(folder: Path, repo: str, branch: str) -> bool:
    """Clone ``repo``'s ``branch`` into ``folder`` unless it is there; whether this call did.

    Cloned beside it and renamed into place: ``folder`` is a whole clone or absent.
    """
    if folder.exists():
        return False
    folder.parent.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
    try:
        git(
            folder.parent,
            "clone", "--quiet", "--no-tags", "--single-branch", "--branch", branch,
            repo, partial.name,
        )  # fmt: skip
        (partial / ".git" / ORIGIN_MARKER).write_text(repo, encoding="utf-8")
        try:
            partial.rename(folder)
        except OSError:
            if not folder.exists():
                raise
            return False
        return True
    finally:
        shutil.rmtree(partial, ignore_errors=True)


def keep_for(folder: Path, unit: str, head: str) -> None:
    """A unit that just pushed ``head`` from ``folder`` leaves the clone to ``unit``, its successor.

    Only right after a push that went through: the remote branch was then at
    ``head``, so the successor may start from the clone without a fetch. A
    person who pushes in between is met by the successor's push, which is
    rejected and rebased onto their change (or the project stops), as when
    they push while a unit runs.
    """
    path = folder / ".git" / KEPT_MARKER
    partial = path.with_name(f"{KEPT_MARKER}.{os.getpid()}")
    with contextlib.suppress(OSError):  # without the note the successor only fetches
        partial.write_text(f"{unit}\n{head}\n", encoding="utf-8")
        partial.replace(path)


def _take_kept(folder: Path, branch: str, unit: str | None) -> str | None:
    """The head ``keep_for`` left for ``unit``, if the clone is still on it; the note is used up."""
    path = folder / ".git" / KEPT_MARKER
    try:
        kept = path.read_text(encoding="utf-8").split("\n")
        path.unlink()
    except OSError:
        return None
    if unit is None or len(kept) < 2 or kept[0] != unit:
        return None
    head = kept[1]
    return head if _head_of(folder, branch) == head else None


def _head_of(folder: Path, branch: str) -> str | None:
    """The commit checked out on ``branch``, read from ``.git`` (None: not on it, or packed)."""
    dot_git = folder / ".git"
    try:
        if (dot_git / "HEAD").read_text(encoding="utf-8").strip() != f"ref: refs/heads/{branch}":
            return None
        sha = (dot_git / "refs" / "heads" / branch).read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return sha if _is_sha(sha) else None


def _is_sha(text: str) -> bool:
    return len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text)


def _fetch(folder: Path, branch: str, timeout: float) -> None:
    git(
        folder, *NO_AUTO_MAINTENANCE, "fetch", "--quiet", "--no-tags", "origin", _refspec(branch),
        timeout=timeout,
    )  # fmt: skip


def _fetched(folder: Path) -> str | None:
    """The commit the last fetch of one branch brought (``FETCH_HEAD``'s first field).

    Saves a ``git rev-parse`` per unit; None when the file is not as expected.
    """
    try:
        first = (folder / ".git" / "FETCH_HEAD").read_text(encoding="utf-8").split("\t", 1)[0]
    except OSError:
        return None
    sha = first.strip()
    return sha if len(sha) in (40, 64) and all(c in "0123456789abcdef" for c in sha) else None


def _refspec(branch: str) -> str:
    return f"+refs/heads/{branch}:{_remote_ref(branch)}"


def _remote_ref(branch: str) -> str:
    return f"refs/remotes/origin/{branch}"


def commit_all(
    folder: Path, message: str, workflow_id: str, *, agent_ran: bool = True
) -> str | None:
    """Commit everything the unit changed, with the unit's trailer; None if nothing did.

    ``agent_ran`` False (a tick that dispatched nothing, such as the project's
    closing STOP): the work tree is looked at first, and when it is clean the
    commit is not attempted; the kept clone's housekeeping runs then instead.
    """
    if not _commit(folder, message, workflow_id, agent_ran=agent_ran):
        return None
    return git(folder, "rev-parse", "HEAD")


def commit_unit(
    folder: Path, message: str, workflow_id: str, base: str, *, agent_ran: bool
) -> tuple[str, bytes] | None:
    """``commit_all`` and the commit's bundle on ``base``; None if nothing changed.

    The commit is read from the bundle's own list of references, so a unit
    runs no ``git rev-parse`` for it (only when that list is not as expected).
    """
    if not _commit(folder, message, workflow_id, agent_ran=agent_ran):
        return None
    packed = bundle(folder, base)
    return _bundle_head(packed) or git(folder, "rev-parse", "HEAD"), packed


def _commit(folder: Path, message: str, workflow_id: str, *, agent_ran: bool) -> bool:
    if not agent_ran and not git(folder, "status", "--porcelain", "--untracked-files=all"):
        _housekeeping(folder)
        return False
    git(folder, "add", "--all")
    body = f"{message.rstrip()}\n\n{TRAILER}: {workflow_id}\n"
    try:
        git(folder, *NO_AUTO_MAINTENANCE, "commit", "--quiet", "--no-verify", "-m", body)
    except GitError:
        if not git(folder, "status", "--porcelain"):
            return False  # nothing staged: nothing to commit
        raise
    return True


def _bundle_head(packed: bytes) -> str | None:
    """The commit a bundle of ``base..HEAD`` names as ``HEAD`` (gitformat-bundle, v2 or v3)."""
    header, _, _ = packed.partition(b"\n\n")
    lines = header.decode("ascii", errors="replace").splitlines()
    if not lines or lines[0] not in ("# v2 git bundle", "# v3 git bundle"):
        return None
    for line in lines[1:]:
        sha, _, ref = line.partition(" ")
        if ref == "HEAD" and len(sha) in (40, 64) and all(c in "0123456789abcdef" for c in sha):
            return sha
    return None


def _housekeeping(folder: Path) -> None:
    """What fetch and commit leave out (``git maintenance run --auto``); its failure is no error."""
    with contextlib.suppress(GitError):
        git(folder, "maintenance", "run", "--auto", "--quiet", timeout=GIT_TIMEOUT)


def bundle(folder: Path, base: str) -> bytes:
    """The unit's commit (checked out, on ``base``) as a git bundle, for a worker without it."""
    with tempfile.TemporaryDirectory(prefix="tether-bundle-") as tmp:
        path = Path(tmp) / "unit.bundle"
        git(folder, "bundle", "create", "--quiet", str(path), f"{base}..HEAD")
        return path.read_bytes()


def _has_commit(folder: Path, sha: str) -> bool:
    try:
        git(folder, "cat-file", "-e", f"{sha}^{{commit}}")
        return True
    except GitError:
        return False


def find_pushed(folder: Path, branch: str, workflow_id: str) -> str | None:
    """The commit on the remote branch that carries this unit's trailer, if any."""
    marker = f"{TRAILER}: {workflow_id}"
    log = git(
        folder, "log", f"--max-count={SEARCH_DEPTH}", "--format=%H%x00%B%x01",
        _remote_ref(branch),
    )  # fmt: skip
    for entry in log.split("\x01"):
        sha, _, body = entry.strip().partition("\x00")
        if marker in body.splitlines():
            return sha
    return None


@dataclass(frozen=True)
class UnitCommit:
    """A unit's commit to push, the workflow that made it, and its bundle.

    The bundle lets a worker without the commit in its clone push it all the same.
    """

    workflow_id: str
    commit: str
    bundle: bytes | None = None


def push_unit(
    folder: Path,
    branch: str,
    unit: UnitCommit,
    timeout: float,
    *,
    first_try: bool = False,
    attempts: int = 5,
) -> str:
    """Push the unit's commit (at most once); the commit that is on the remote now.

    Skipped when the remote already has a commit with the unit's trailer.
    ``first_try``: this process made the commit and never tried to push it,
    so the remote cannot have it yet and the look is left out. Rebased when
    the branch moved; ``PushConflictError`` when that rebase conflicts. Each
    git command is bounded by ``timeout``.
    """
    if not first_try:
        _fetch(folder, branch, timeout)
        there = find_pushed(folder, branch, unit.workflow_id)
        if there is not None:
            return there
        _check_out_commit(folder, branch, unit, timeout)
    rebased = False
    for _ in range(attempts):
        try:
            git(folder, "push", "--quiet", "origin", f"HEAD:refs/heads/{branch}", timeout=timeout)
            return git(folder, "rev-parse", "HEAD") if rebased else unit.commit
        except TransientGitError:
            raise
        except GitError as rejected:
            _fetch(folder, branch, timeout)
            there = find_pushed(folder, branch, unit.workflow_id)
            if there is not None:
                return there  # the push went through before its answer was lost
            if first_try:
                _check_out_commit(folder, branch, unit, timeout)
                first_try = False
            _rebase(folder, branch, rejected, timeout)
            rebased = True
    raise PushConflictError(f"the push to {branch} was rejected {attempts} times in a row")


def _check_out_commit(folder: Path, branch: str, unit: UnitCommit, timeout: float) -> None:
    """The unit's commit checked out as ``branch``: here already, or from its bundle."""
    commit = unit.commit
    if not _has_commit(folder, commit):
        if unit.bundle is None:
            raise GitError(f"the unit's commit {commit[:12]} is neither here nor in a bundle")
        with tempfile.TemporaryDirectory(prefix="tether-bundle-") as tmp:
            path = Path(tmp) / "unit.bundle"
            path.write_bytes(unit.bundle)
            git(folder, "fetch", "--quiet", str(path), "HEAD", timeout=timeout)
        if not _has_commit(folder, commit):
            raise GitError(f"the unit's bundle does not hold its commit {commit[:12]}")
    git(folder, "checkout", "--quiet", "--force", "-B", branch, commit)


def _rebase(folder: Path, branch: str, rejected: GitError, timeout: float) -> None:
    try:
        git(folder, "rebase", "--quiet", _remote_ref(branch), timeout=timeout)
    except GitError:
        subprocess.run(["git", "rebase", "--abort"], cwd=folder, capture_output=True, check=False)
        raise PushConflictError(
            f"the push to {branch} was rejected ({rejected}) and the unit's commit "
            f"does not rebase onto the new head: someone changed the same files; "
            f"resolve it in the repository, then `tether fleet resume`"
        ) from None
