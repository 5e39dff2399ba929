"""W03: open exactly one room — a depth-1 atomic run — and take its conclusion (W04).

Circuit breaker, depth cap 1: a room never opens a room, and never two rooms
run in parallel. ``room open`` is refused

- inside a room: its run has ``TETHER_ROOM_DIR`` and ``TETHER_ROOM_ID`` set, and
  a process below the room's opener (found in the process tree, so also with
  those variables removed) is inside it too;
- while another room is open on the same wiki: an exclusive ``flock`` on
  ``$TETHER_HOME/rooms/.lock-<key of the wiki root>``, held for the room's life
  and released by the kernel if tether dies;
- while the same session already has a room open (on any wiki): a second
  ``flock``, on ``.session-<key of the caller's session>`` (the session as the
  gate finds it: ``TETHER_SESSION_ID``, the harness's variable, else the agent
  process above).

Rooms on two different wikis, opened by two different sessions, run side by side.

Any other caller may open a room, also a session that tether started itself
(``tether run``, the loop: ``TETHER_DEPTH`` >= 1). The room is one level below
its caller; ``TETHER_DEPTH`` counts runs, not rooms. The brief fixes the page
list before the run starts; with two pages or fewer no room is opened at all.

After the run the conclusion (``tether room conclude`` inside the room, else the
agent's last message) is checked; the result is the checked conclusion, or on a
failed check, a budget hit or missing data (B01) the evidence for the main
session to decide.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from tether.core.project import ENV_ROOM_DIR
from tether.core.session_stamp import stamp_session
from tether.fs import atomic_write_json, lock_file
from tether.gate.roomrule import (
    CONCLUSION_FILE,
    ENV_ROOM_ID,
    NESTED_HINT,
    ROOM_COMMANDS,
)
from tether.harnesses.base import ToolAllowance
from tether.room.brief import Brief
from tether.room.conclusion_check import MAX_WORDS, ConclusionCheck, check_conclusion
from tether.room.locks import LOCK_PREFIX
from tether.room.locks import held_by as _held_by
from tether.room.state import (
    CHECK_FILE,
    SESSION_KEY,
    ReadSummary,
    Room,
    RoomRefusedError,
    rooms_dir,
)
from tether.wiki.layout import Wiki

SESSION_PREFIX = ".session-"
STATUS_OK = "ok"
STATUS_B01 = "b01"
STATUS_CHECK_FAILED = "check-failed"
STATUS_NO_CONCLUSION = "no-conclusion"
STATUS_READ_DIRECTLY = "read-directly"

RULES = (
    "1. Read only within the budget: only the pages listed below, at most B of them, and "
    "only with `tether wiki read ID`. Reads beyond B or off the list are refused, and so is "
    "every other tool call (reading files, grep, any other command): the only other call "
    "allowed is writing the conclusion.",
    f"2. Return at most {MAX_WORDS} words, every claim with its source page as [[page id]].",
    "3. Open no room: never run `tether room open` (it is refused in here).",
)


@dataclass
class RoomResult:
    status: str
    brief: Brief
    room_id: str | None = None
    folder: Path | None = None
    run: dict[str, Any] = field(default_factory=dict)
    conclusion: str | None = None
    check: ConclusionCheck | None = None
    summary: ReadSummary | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "room": self.room_id,
            "folder": str(self.folder) if self.folder else None,
            "run": self.run,
            "conclusion": self.conclusion,
            "check": self.check.to_dict() if self.check else None,
            "reads": self.summary.as_dict() if self.summary else {},
            "brief": self.brief.to_dict(),
        }


_HOLDER = re.compile(r"^room (?P<room>\S+), pid (?P<pid>\d+):")


def refuse_nesting(env: Mapping[str, str]) -> None:
    """Refuse ``room open`` from inside a room (by its environment); anyone else may."""
    room_id = env.get(ENV_ROOM_ID)
    room_dir = env.get(ENV_ROOM_DIR)
    if room_id or room_dir:
        where = f"room {room_id}" if room_id else f"the room at {room_dir}"
        raise RoomRefusedError(f"refused: `room open` inside {where}. {NESTED_HINT}")


def _opener_above(holder: str) -> str | None:
    """The room id when the room holding the lock was opened by an ancestor of this process."""
    import psutil  # only once a room is open

    match = _HOLDER.match(holder)
    if match is None:
        return None
    pid = int(match["pid"])
    try:
        here = psutil.Process()
        if pid == here.pid or any(parent.pid == pid for parent in here.parents()):
            return match["room"]
    except psutil.Error:
        return None
    return None


def _key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:16]


def wiki_lock_path(home: Path, wiki_root: Path) -> Path:
    """The lock of the rooms on one wiki, keyed by its resolved root."""
    return rooms_dir(home) / f"{LOCK_PREFIX}{_key(str(Path(wiki_root).resolve()))}"


def session_lock_path(home: Path, env: Mapping[str, str]) -> Path:
    """The lock of the rooms one session opens, keyed by the session the gate would count."""
    from tether.core.session_identity import resolve

    return rooms_dir(home) / f"{SESSION_PREFIX}{_key(resolve(None, None, env).key)}"


def room_above(home: Path) -> str | None:
    """The open room whose run this process runs under, found without the room's variables.

    The room's variables are a convenience, not the boundary: a read with them
    removed still counts against the room when the process tree says it is one.
    """
    folder = rooms_dir(home)
    if not folder.is_dir():
        return None
    for path in sorted(folder.glob(LOCK_PREFIX + "*")):
        holder = _held_by(path)
        if holder:
            inside = _opener_above(holder)
            if inside is not None:
                return inside
    return None


def _inside_room(room: str) -> RoomRefusedError:
    return RoomRefusedError(
        f"refused: `room open` inside room {room} (this process runs under the "
        f"room's run). {NESTED_HINT}"
    )


def refuse_busy(home: Path, wiki_root: Path, env: Mapping[str, str]) -> None:
    """Refuse at once what ``open_room`` would refuse for the rooms already open (this
    process under a room's run, a room on this wiki, a room of this session), so that a
    refused ``room open`` does not compute its brief first. ``open_room`` holds the
    locks for real."""
    refuse_nesting(env)
    inside = room_above(home)
    if inside is not None:
        raise _inside_room(inside)
    with room_lock(home, wiki_root, env):
        pass


@contextmanager
def _exclusive(path: Path, refusal: str) -> Iterator[TextIO]:
    handle = path.open("a+", encoding="utf-8")
    try:
        if not lock_file(handle, wait=False):
            handle.seek(0)
            holder = handle.read().strip() or "another room"
            inside = _opener_above(holder)
            if inside is not None:
                raise _inside_room(inside) from None
            raise RoomRefusedError(refusal.format(holder=holder)) from None
        yield handle
    finally:
        handle.close()


@contextmanager
def room_lock(home: Path, wiki_root: Path, env: Mapping[str, str]) -> Iterator[list[TextIO]]:
    """Hold the wiki's room lock and the session's room lock for the room's life."""
    folder = rooms_dir(home)
    folder.mkdir(parents=True, exist_ok=True)
    with (
        _exclusive(
            session_lock_path(home, env),
            "refused: this session already has a room open ({holder}); never two rooms "
            "for one session. Wait for its conclusion, then decide.",
        ) as session,
        _exclusive(
            wiki_lock_path(home, wiki_root),
            "refused: a room is already open on this wiki ({holder}); one room per wiki. "
            "Wait for its conclusion, then decide.",
        ) as wiki,
    ):
        yield [wiki, session]


def _write_holder(handles: list[TextIO], room_id: str, question: str) -> None:
    for handle in handles:
        handle.seek(0)
        handle.truncate(0)
        handle.write(f"room {room_id}, pid {os.getpid()}: {question[:80]}\n")
        handle.flush()


def new_room_id() -> str:
    # os.urandom(n).hex() is what secrets.token_hex(n) returns, without loading secrets
    return datetime.now(UTC).strftime("%Y%m%d-%H%M%S-") + os.urandom(3).hex()


def room_data(
    room_id: str, wiki: Wiki, brief: Brief, env: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """What ``room.json`` records, with the opener's session (the stamp's) from ``env``."""
    return {
        "id": room_id,
        SESSION_KEY: stamp_session(os.environ if env is None else env),
        "question": brief.question,
        "budget": brief.budget,
        "wiki_root": str(wiki.root),
        "pages_dir": str(wiki.pages_dir),
        "created_at": datetime.now(UTC).isoformat(),
        "pages": [p.to_dict() for p in brief.pages],
        "cut": [p.to_dict() for p in brief.cut],
    }


def room_prompt(brief: Brief) -> str:
    lines = [
        "You are a room: a bounded reader of the wiki. Answer one question from the wiki "
        "pages below and return a short, cited conclusion.",
        "",
        f"Question: {brief.question}",
        f"Budget B: {brief.budget} pages (1-hop neighbours included).",
        "",
        "Hard rules:",
        *RULES,
        "",
        "Pages (read with `tether wiki read ID`):",
    ]
    for page in brief.pages:
        flag = f" [STALE: {page.stale_reason}]" if page.stale else ""
        via = f" (via {'; '.join(page.via)})" if page.via else ""
        lines.append(f"- {page.id} — {page.title} [{page.why}]{via}{flag}")
    if brief.cut:
        lines.append("")
        lines.append(
            "Left out by the budget (not readable here): " + ", ".join(p.id for p in brief.cut)
        )
    lines += [
        "",
        "The conclusion:",
        f"- at most {MAX_WORDS} words; every paragraph or list item cites [[page id]] of a page "
        "you read;",
        "- flag a stale page: write 'stale' next to its citation;",
        "- if a read was refused because B was reached, add the line "
        "`budget reached, not read: <page ids>`;",
        "- if data was missing, add the line `missing: <what>`.",
        "Record it with `tether room conclude FILE` (or `-` for stdin), or give it as your last "
        "message.",
    ]
    return "\n".join(lines) + "\n"


def room_allowance(folder: Path, env: Mapping[str, str]) -> ToolAllowance:
    """The room's rule as a harness allow-list: the second belt behind the gate.

    The commands are the room rule's own (``ROOM_COMMANDS``), as ``tether …`` and
    as the full path of the ``tether`` the room's run finds on its PATH.
    """
    import shutil

    programs = ["tether"]
    found = shutil.which("tether", path=env.get("PATH"))
    if found is not None and found not in programs:
        programs.append(found)
    return ToolAllowance(
        commands=tuple((program, *command) for program in programs for command in ROOM_COMMANDS),
        write_file=folder.resolve() / CONCLUSION_FILE,
    )


def finish_room(room: Room, conclusion: str | None) -> tuple[str, ConclusionCheck | None]:
    """Stamp and check the conclusion and decide the status (W04)."""
    if conclusion is None or not conclusion.strip():
        return STATUS_NO_CONCLUSION, None
    conclusion = room.write_conclusion(conclusion)
    result = check_conclusion(conclusion, room)
    atomic_write_json(room.folder / CHECK_FILE, result.to_dict())
    if not result.ok:
        return STATUS_CHECK_FAILED, result
    if result.budget_hit or result.has_missing:
        return STATUS_B01, result
    return STATUS_OK, result


def open_room(
    wiki: Wiki,
    home: Path,
    brief: Brief,
    *,
    profile: str | None,
    env: Mapping[str, str],
    timeout: float | None = None,
) -> RoomResult:
    """Run one room for ``brief`` (its run in the caller's working folder); refuses
    nesting, a second room, and a room inside a run."""
    from tether.runs.sandboxing import refuse_nested

    refuse_nesting(env)
    refuse_nested(env, "`room open`")
    if brief.read_directly:
        return RoomResult(STATUS_READ_DIRECTLY, brief)
    from tether.runs.supervisor import RunRequest, supervise

    inside = room_above(home)
    if inside is not None:
        raise _inside_room(inside)
    with room_lock(home, wiki.root, env) as locks:
        room_id = new_room_id()
        _write_holder(locks, room_id, brief.question)
        room = Room.create(home, room_id, room_data(room_id, wiki, brief, env))
        run_env = dict(env)
        run_env[ENV_ROOM_DIR] = str(room.folder)
        run_env[ENV_ROOM_ID] = room_id
        outcome = supervise(
            RunRequest(
                prompt=room_prompt(brief),
                profile=profile,
                unit=f"room:{room_id}",
                timeout=timeout,
                allow=room_allowance(room.folder, run_env),
                # the agent writes its conclusion there (the tether home is read-only)
                writable=(room.folder,),
                readable=(wiki.root,),
            ),
            env=run_env,
        )
        written = room.folder / CONCLUSION_FILE
        if written.exists():
            conclusion: str | None = written.read_text("utf-8")
        else:
            conclusion = outcome.ledger.last_assistant_text
        status, result = finish_room(room, conclusion)
        if result is not None:
            conclusion = written.read_text("utf-8")  # as written: with its stamp
        run = {
            "run_id": outcome.run_id,
            "stop": outcome.stop.value,
            "exit_code": int(outcome.exit_code),
            "session_id": outcome.row.session_id,
        }
        atomic_write_json(room.folder / "result.json", {"status": status, "run": run})
        return RoomResult(
            status, brief, room_id, room.folder, run, conclusion, result, room.summary()
        )
