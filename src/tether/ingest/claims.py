"""The agent side of the ingest queue: one entry per run, claimed, accepted, ended.

A claim is one ``rename(2)`` of the entry folder into ``incoming/.claimed/``:
of two runs that race for the same entry exactly one rename succeeds (the
other finds the folder gone and takes the next one), and the claim survives a
crash because it is the folder's place on disk. A file is accepted into
``raw/`` with ``link(2)``, which refuses an existing name; a collision is a stop
for the human (``HumanStopError``). Giving a claim back after a crashed run
(``requeue``) is a human action.
"""

from __future__ import annotations

import os
import shutil
import socket
import stat
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

from tether.core.errors import UsageError
from tether.core.session_stamp import stamp
from tether.fs import atomic_write_json, fsync_dir
from tether.ingest.bundle import copy_bundle
from tether.ingest.entry import (
    CLAIM_FILE,
    Entry,
    HumanStopError,
    IngestRefusedError,
    now_stamp,
)
from tether.ingest.intake import refuse_inside_agent
from tether.ingest.listing import QueueFolders
from tether.ingest.manifest import (
    BUNDLE,
    MANIFEST,
    Manifest,
    dialog_reasons,
    name_collision,
    read_manifest,
    write_manifest,
)


class Claims(QueueFolders):
    def next(self, owner: str, *, headless: bool = False) -> tuple[Entry, bool] | None:
        """Claim the oldest waiting entry for ``owner`` (or give back its open claim).

        One unit per session: a session that already ended an entry is refused
        (``IngestRefusedError``, exit 30); only a new session id opens the next
        one. A headless run (``headless``) never gets an entry that needs the
        user: those go to the human (``HumanStopError``, exit 41) when nothing
        else waits.
        """
        for entry in self.claims():
            if entry.claim().owner == owner:
                return entry, True
        ended = [e for e in self.finished() if e.claim().owner == owner]
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
                "claimed_at": now_stamp(),
            },
        )
        fsync_dir(self.claimed)
        fsync_dir(self.incoming)
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
            if not name_collision(entry.manifest, target):
                return target  # already accepted (a resumed claim)
            raise HumanStopError(
                f"stop: raw/{entry.name} already exists with other content; nothing was "
                f"overwritten. Rename one of them, then run `tether ingest next` again."
            )
        payload = self._payload(entry)
        if entry.kind == BUNDLE:
            # secrets.token_hex(6), without loading secrets (random, base64, hmac)
            temp = self.raw / f".accept-{os.urandom(6).hex()}"
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
            known = entry.manifest.skipped_paths
            new = [s.to_dict() for s in copied.skipped if s.path not in known]
            if new:
                self.update_manifest(entry, skipped=[*entry.manifest.skipped(), *new])
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
        fsync_dir(self.raw)
        return target

    def end(
        self,
        owner: str,
        given: str | None = None,
        *,
        env: Mapping[str, str] | None = None,
        own_only: bool = False,
    ) -> Entry:
        """Mark the owner's claimed entry (or ``given``) done; with ``own_only`` a ``given``
        entry claimed by another session is refused.

        The receipt in its manifest is ``ended_at`` and, as the last field,
        ``session_line``: the session stamp of ``env``."""
        if given is not None:
            folder = self.child(self.claimed, given)
            if not (folder / MANIFEST).is_file():
                raise UsageError(f"no claimed entry {given!r}; `tether ingest status` shows them")
            entry = Entry(folder.name, folder, read_manifest(folder))
            if own_only and entry.claim().owner != owner:
                raise UsageError(
                    f"refused: entry {given!r} is claimed by another session; this session "
                    f"ends only its own claim."
                )
        else:
            mine = [e for e in self.claims() if e.claim().owner == owner]
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
        fields = entry.manifest.as_dict()
        fields["ended_at"] = now_stamp()
        fields.pop("session_line", None)  # the stamp is the receipt's last field
        fields["session_line"] = stamp(os.environ if env is None else env, "tether-ingest")
        manifest = Manifest.parse(fields)
        write_manifest(entry.folder, manifest)
        entry.folder.rename(target)
        fsync_dir(self.done)
        return Entry(entry.id, target, manifest)

    def requeue(self, given: str) -> Entry:
        """Human action: give a claimed entry back to incoming/ (after a crashed run).

        Refused (``IngestRefusedError``) inside an agent's process tree.
        """
        refuse_inside_agent("requeue")
        folder = self.child(self.claimed, given)
        if not (folder / MANIFEST).is_file():
            raise UsageError(f"no claimed entry {given!r}")
        target = self.incoming / folder.name
        if target.exists():
            raise HumanStopError(f"stop: incoming/{folder.name} exists; nothing was overwritten")
        (folder / CLAIM_FILE).unlink(missing_ok=True)
        folder.rename(target)
        return Entry(folder.name, target, read_manifest(target))
