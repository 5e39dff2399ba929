"""The ingest queue: quarantine → (a human releases) → incoming → claimed → done.

Folders under the wiki root: ``quarantine/<id>/`` (collected, never shown to
an agent), ``incoming/<id>/`` (released, waiting), ``incoming/.claimed/<id>/``
(taken by one run) and ``incoming/.done/<id>/``. Each entry folder holds its
``manifest.json`` and the collected file or folder.

A claim is one ``rename(2)`` of the entry folder into ``.claimed/``: of two
runs that race for the same entry exactly one rename succeeds (the other finds
the folder gone and takes the next one), and the claim survives a crash
because it is the folder's place on disk. A move never overwrites: the kernel
refuses to rename a folder onto a non-empty one, and a file is accepted into
``raw/`` with ``link(2)``, which refuses an existing name. A collision is a stop
for the human.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import socket
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tether.errors import PathEscapeError, TetherError, UsageError
from tether.exit_codes import ExitCode
from tether.fs import atomic_write_json, resolve_inside
from tether.gate.newsession import agent_ancestry
from tether.gate.stamp import stamp
from tether.ingest.bundle import copy_bundle
from tether.ingest.manifest import (
    BUNDLE,
    MANIFEST,
    SOURCE,
    dialog_reasons,
    entry_id,
    read_manifest,
    sha256_of,
    write_manifest,
)
from tether.wiki.layout import Wiki

CLAIMED = ".claimed"
DONE = ".done"
CLAIM_FILE = "claim.json"


class HumanStopError(TetherError):
    """A name collision (or another hold) that only the human resolves; nothing was overwritten."""

    exit_code = ExitCode.HUMAN_STOP


class IngestRefusedError(TetherError):
    """A human-only action attempted from inside an agent's process tree."""

    exit_code = ExitCode.GATE_REFUSED


@dataclass(frozen=True)
class Entry:
    id: str
    folder: Path
    manifest: dict[str, Any]

    @property
    def kind(self) -> str:
        return str(self.manifest.get("kind", SOURCE))

    @property
    def name(self) -> str:
        return str(self.manifest.get("name", self.id))

    @property
    def payload(self) -> Path:
        return self.folder / self.name

    def claim(self) -> dict[str, Any]:
        import json

        try:
            data: dict[str, Any] = json.loads((self.folder / CLAIM_FILE).read_text("utf-8"))
        except (OSError, ValueError):
            return {}
        return data


def refuse_inside_agent(action: str) -> None:
    """Raise ``IngestRefusedError`` when this process runs inside an agent's process tree."""
    inside = agent_ancestry()
    if inside is not None:
        raise IngestRefusedError(
            f"refused: `tether ingest {action}` is a human action and runs inside an agent's "
            f"process tree ({inside}). Run it yourself in a terminal, outside the agent."
        )


def quarantine_view(ids: list[str]) -> list[str]:
    """What of quarantine/ may be shown here: nothing of it to an agent, not even its names."""
    if agent_ancestry() is None:
        return ids
    return [f"({len(ids)} not released)"] if ids else []


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class Queue:
    def __init__(self, wiki: Wiki) -> None:
        self.wiki = wiki
        self.quarantine = wiki.quarantine_dir
        self.incoming = wiki.incoming_dir
        self.claimed = self.incoming / CLAIMED
        self.done = self.incoming / DONE
        self.raw = wiki.raw_dir

    # --- listing ----------------------------------------------------------------

    def _entries(self, folder: Path) -> list[Entry]:
        if not folder.is_dir():
            return []
        out: list[Entry] = []
        for child in folder.iterdir():
            if child.name.startswith(".") or child.is_symlink():
                continue  # hidden work folders; a linked entry would reach outside the queue
            if not (child / MANIFEST).is_file():
                continue
            with contextlib.suppress(UsageError):
                out.append(Entry(child.name, child, read_manifest(child)))
        return out

    def waiting(self, kind: str | None = None) -> list[Entry]:
        """Entries in incoming/, oldest release first."""
        entries = [e for e in self._entries(self.incoming) if kind is None or e.kind == kind]
        return sorted(entries, key=lambda e: (str(e.manifest.get("released_at") or ""), e.id))

    def quarantined(self) -> list[Entry]:
        return sorted(self._entries(self.quarantine), key=lambda e: e.id)

    def claims(self) -> list[Entry]:
        return sorted(self._entries(self.claimed), key=lambda e: e.id)

    def finished(self) -> list[Entry]:
        return sorted(self._entries(self.done), key=lambda e: e.id)

    # --- collect & release (human side) -------------------------------------------

    def collect(self, path: Path, *, capture: dict[str, Any] | None = None) -> dict[str, Any]:
        """Copy ``path`` (a file, or a folder = a bundle) into quarantine/ with its manifest.

        A bundle is copied by ``tether.ingest.bundle``: a symlink that resolves
        outside the folder (or loops, or points at nothing) and special files are
        left out and listed under ``skipped`` in the result and the manifest. The
        digest and size are those of what was copied. A file named here is
        copied by its content (the human chose it, link or not).
        """
        source = Path(path)
        if not source.exists():
            raise UsageError(f"nothing to collect at {source}")
        kind = BUNDLE if source.is_dir() else SOURCE
        name = entry_id(source.name)
        self.quarantine.mkdir(parents=True, exist_ok=True)
        temp = self.quarantine / f".collect-{secrets.token_hex(6)}"
        temp.mkdir()
        target = self.quarantine / name
        try:
            skipped: list[dict[str, Any]] = []
            if kind == BUNDLE:
                copied = copy_bundle(source, temp / name)
                digest, size = copied.sha256, copied.size
                skipped = [s.to_dict() for s in copied.skipped]
            else:
                shutil.copyfile(source, temp / name)
                digest, size = sha256_of(temp / name)
            duplicate = self._with_digest(digest)
            if duplicate is not None:
                shutil.rmtree(temp, ignore_errors=True)
                return {"id": duplicate.id, "status": "duplicate", "of": str(duplicate.folder)}
            if target.exists() or (self.incoming / name).exists():
                raise HumanStopError(
                    f"stop: an entry named {name!r} already exists "
                    f"({'quarantine' if target.exists() else 'incoming'}); nothing was "
                    f"overwritten. Rename the file or finish the other entry first."
                )
            manifest = {
                "id": name,
                "kind": kind,
                "name": name,
                "origin": str(source.resolve()),
                "size": size,
                "sha256": digest,
                "collected_at": _now(),
                "collected_by": _who(),
                "released_at": None,
                "capture": capture,
                "sync_exit": None,
                "ticket": None,
            }
            if kind == BUNDLE:
                manifest["skipped"] = skipped
            write_manifest(temp, manifest)
            temp.rename(target)
        except OSError as exc:
            shutil.rmtree(temp, ignore_errors=True)
            if target.exists():
                raise HumanStopError(
                    f"stop: {name!r} appeared in quarantine meanwhile; nothing was overwritten"
                ) from exc
            raise
        except BaseException:
            shutil.rmtree(temp, ignore_errors=True)
            raise
        _fsync_dir(self.quarantine)
        result = {"id": name, "status": "collected", "kind": kind, "size": size, "sha256": digest}
        if kind == BUNDLE:
            result["skipped"] = skipped
        return result

    def _with_digest(self, digest: str) -> Entry | None:
        """An entry already collected with these contents (in any state)."""
        for entry in (
            *self.quarantined(),
            *self._entries(self.incoming),
            *self.claims(),
            *self.finished(),
        ):
            if entry.manifest.get("sha256") == digest:
                return entry
        return None

    def _child(self, folder: Path, given: str) -> Path:
        """``folder/given`` for an entry name; refuses paths, '..' and links out."""
        if not given or "/" in given or given in (".", "..") or given.startswith("."):
            raise PathEscapeError(given, str(folder))
        real = resolve_inside(folder, given)
        if real.parent != folder.resolve():
            raise PathEscapeError(given, str(folder))
        return real

    def release(self, ids: list[str]) -> list[dict[str, Any]]:
        """Human action: move entries from quarantine/ to incoming/; a name already there is a stop.

        Refused (``IngestRefusedError``) inside an agent's process tree.
        """
        refuse_inside_agent("release")
        results: list[dict[str, Any]] = []
        stops: list[str] = []
        self.incoming.mkdir(parents=True, exist_ok=True)
        for given in ids:
            folder = self._child(self.quarantine, given)
            if not (folder / MANIFEST).is_file():
                raise UsageError(
                    f"no entry {given!r} in quarantine/ (`tether ingest status` lists them)"
                )
            name = folder.name
            if (self.incoming / name).exists() or (self.claimed / name).exists():
                stops.append(name)
                results.append({"id": name, "status": "collision"})
                continue
            manifest = read_manifest(folder)
            manifest["released_at"] = _now()
            write_manifest(folder, manifest)
            try:
                folder.rename(self.incoming / name)
            except OSError:
                stops.append(name)
                results.append({"id": name, "status": "collision"})
                continue
            results.append({"id": name, "status": "released"})
        _fsync_dir(self.incoming)
        if stops:
            raise HumanStopError(
                f"stop: {', '.join(stops)} already in incoming/ (or being ingested); nothing was "
                f"overwritten. Rename or finish the other entry, then release again.",
            )
        return results

    # --- one entry per run (agent side) -------------------------------------------

    def next(self, owner: str, *, headless: bool = False) -> tuple[Entry, bool] | None:
        """Claim the oldest waiting entry for ``owner`` (or give back its open claim).

        One unit per session: a session that already ended an entry is refused
        (``IngestRefusedError``, exit 30); only a new session id opens the next
        one. A headless run (``headless``) never gets an entry that needs the
        user: those go to the human (``HumanStopError``, exit 41) when nothing
        else waits.
        """
        for entry in self.claims():
            if entry.claim().get("owner") == owner:
                return entry, True
        ended = [e for e in self.finished() if e.claim().get("owner") == owner]
        if ended:
            raise IngestRefusedError(
                f"refused: this session already worked on entry {ended[-1].id}; one unit per "
                f"session. Next: /clear, then ingest (a fresh session claims the next entry)."
            )
        held: list[tuple[Entry, list[str]]] = []
        for entry in self.waiting():
            if headless:
                reasons = dialog_reasons(entry.manifest, self.raw)
                if reasons:
                    held.append((entry, reasons))
                    continue
            claimed = self.claim(entry, owner)
            if claimed is not None:
                return claimed, False
        if held:
            names = ", ".join(f"{e.id} ({'; '.join(r)})" for e, r in held)
            raise HumanStopError(
                f"stop: what waits needs the user, and a headless run never takes it: {names}. "
                f"It goes to the human: `tether ingest run` files a USER/decision ticket for "
                f"each; the user ingests it interactively."
            )
        return None

    def loose_files(self) -> list[str]:
        """Names in incoming/ that are no released entry (dropped there by hand)."""
        if not self.incoming.is_dir():
            return []
        return sorted(
            child.name
            for child in self.incoming.iterdir()
            if not child.name.startswith(".") and not (child / MANIFEST).is_file()
        )

    def claim(self, entry: Entry, owner: str) -> Entry | None:
        """Claim this waiting entry and accept its source into raw/; None if it was taken."""
        self.claimed.mkdir(parents=True, exist_ok=True)
        target = self.claimed / entry.id
        try:
            entry.folder.rename(target)
        except OSError:
            return None  # taken by another run a moment ago (or a claim of that name is open)
        atomic_write_json(
            target / CLAIM_FILE,
            {
                "owner": owner,
                "pid": os.getppid(),
                "host": socket.gethostname(),
                "claimed_at": _now(),
            },
        )
        _fsync_dir(self.claimed)
        _fsync_dir(self.incoming)
        claimed = Entry(entry.id, target, entry.manifest)
        try:
            self.accept(claimed)
        except HumanStopError:
            (target / CLAIM_FILE).unlink(missing_ok=True)
            target.rename(entry.folder)  # give it back: the human decides
            raise
        return claimed

    def _payload(self, entry: Entry) -> Path:
        """The entry's collected file or folder, checked to be itself: no symlink, right type."""
        payload = entry.payload
        try:
            st = os.lstat(payload)
        except OSError:
            raise HumanStopError(
                f"stop: entry {entry.id} has no {entry.name!r} in its folder; nothing was accepted"
            ) from None
        wanted = stat.S_ISDIR if entry.kind == BUNDLE else stat.S_ISREG
        inside = (
            entry.name not in ("", ".", "..")
            and "/" not in entry.name
            and payload.parent.resolve() == entry.folder.resolve()
            and entry.folder.resolve().is_relative_to(self.wiki.root)
        )
        if not wanted(st.st_mode) or not inside:
            what = "a folder" if entry.kind == BUNDLE else "a regular file"
            raise HumanStopError(
                f"stop: {entry.name!r} in entry {entry.id} is not {what} inside the queue "
                f"(a symlink?); nothing was accepted into raw/. Collect the source again."
            )
        return payload

    def accept(self, entry: Entry) -> Path:
        """Put the entry's source into raw/ under its name; an existing other file is a stop.

        A bundle is copied again the way it was collected (``tether.ingest.bundle``),
        so a link added to the entry since is left out too (and noted in the
        manifest); a file is hard-linked, never through a symlink.
        """
        self.raw.mkdir(parents=True, exist_ok=True)
        target = self.raw / entry.name
        if os.path.lexists(target):
            if not target.is_symlink() and sha256_of(target)[0] == entry.manifest.get("sha256"):
                return target  # already accepted (a resumed claim)
            raise HumanStopError(
                f"stop: raw/{entry.name} already exists with other content; nothing was "
                f"overwritten. Rename one of them, then run `tether ingest next` again."
            )
        payload = self._payload(entry)
        if entry.kind == BUNDLE:
            temp = self.raw / f".accept-{secrets.token_hex(6)}"
            try:
                copied = copy_bundle(payload, temp)
            except BaseException:
                shutil.rmtree(temp, ignore_errors=True)
                raise
            try:
                if os.path.lexists(target):
                    raise FileExistsError(str(target))
                temp.rename(target)
            except OSError:
                shutil.rmtree(temp, ignore_errors=True)
                raise HumanStopError(
                    f"stop: raw/{entry.name} appeared meanwhile; nothing was overwritten"
                ) from None
            known = {s.get("path") for s in entry.manifest.get("skipped") or []}
            new = [s.to_dict() for s in copied.skipped if s.path not in known]
            if new:
                self.update_manifest(entry, skipped=[*(entry.manifest.get("skipped") or []), *new])
        else:
            try:
                os.link(payload, target, follow_symlinks=False)
            except FileExistsError:
                raise HumanStopError(
                    f"stop: raw/{entry.name} appeared meanwhile; nothing was overwritten"
                ) from None
            if not stat.S_ISREG(os.lstat(target).st_mode):  # swapped for a link meanwhile
                target.unlink()
                raise HumanStopError(
                    f"stop: {entry.name!r} in entry {entry.id} changed into a symlink; "
                    f"nothing was accepted into raw/"
                )
        _fsync_dir(self.raw)
        return target

    def end(
        self, owner: str, given: str | None = None, *, env: Mapping[str, str] | None = None
    ) -> Entry:
        """Mark the owner's claimed entry (or ``given``) done.

        The receipt in its manifest is ``ended_at`` and, as the last field,
        ``session_line``: the session stamp of ``env`` (SPEC C9)."""
        if given is not None:
            folder = self._child(self.claimed, given)
            if not (folder / MANIFEST).is_file():
                raise UsageError(f"no claimed entry {given!r}; `tether ingest status` shows them")
            entry = Entry(folder.name, folder, read_manifest(folder))
        else:
            mine = [e for e in self.claims() if e.claim().get("owner") == owner]
            if not mine:
                others = ", ".join(e.id for e in self.claims())
                hint = (
                    f" Claimed by other sessions: {others}; name one with --entry."
                    if others
                    else ""
                )
                raise UsageError(f"this session has no claimed entry to end.{hint}")
            entry = mine[0]
        self.done.mkdir(parents=True, exist_ok=True)
        target = self.done / entry.id
        if target.exists():
            target = self.done / f"{entry.id}.{datetime.now(UTC).strftime('%Y%m%dT%H%M%S%f')}"
        manifest = dict(entry.manifest)
        manifest["ended_at"] = _now()
        manifest.pop("session_line", None)  # the stamp is the receipt's last field
        manifest["session_line"] = stamp(os.environ if env is None else env, "tether-ingest")
        write_manifest(entry.folder, manifest)
        entry.folder.rename(target)
        _fsync_dir(self.done)
        return Entry(entry.id, target, manifest)

    def requeue(self, given: str) -> Entry:
        """Human action: give a claimed entry back to incoming/ (after a crashed run).

        Refused (``IngestRefusedError``) inside an agent's process tree.
        """
        refuse_inside_agent("requeue")
        folder = self._child(self.claimed, given)
        if not (folder / MANIFEST).is_file():
            raise UsageError(f"no claimed entry {given!r}")
        target = self.incoming / folder.name
        if target.exists():
            raise HumanStopError(f"stop: incoming/{folder.name} exists; nothing was overwritten")
        (folder / CLAIM_FILE).unlink(missing_ok=True)
        folder.rename(target)
        return Entry(folder.name, target, read_manifest(target))

    def update_manifest(self, entry: Entry, **changes: Any) -> Entry:
        manifest = {**entry.manifest, **changes}
        write_manifest(entry.folder, manifest)
        return Entry(entry.id, entry.folder, manifest)


def _who() -> str:
    import getpass

    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return f"uid {os.getuid()}"
