"""The human side of the ingest queue: collect into quarantine/, then release.

Releasing (and requeueing, ``tether.ingest.claims``) are human actions: they
refuse inside an agent's process tree (``refuse_inside_agent``), and nothing of
quarantine/ is shown to an agent, not even its names. A move never overwrites: the kernel refuses to
rename a folder onto a non-empty one, so a name already there is a stop for
the human (``HumanStopError``).
"""

from __future__ import annotations

import os
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from tether.core.agent_tree import inside_agent
from tether.core.errors import UsageError
from tether.fs import fsync_dir
from tether.human_only import refuse_inside_agent as refuse_action
from tether.ingest.bundle import Skipped, copy_bundle
from tether.ingest.entry import HumanStopError, IngestRefusedError, now_stamp
from tether.ingest.listing import QueueFolders
from tether.ingest.manifest import (
    BUNDLE,
    MANIFEST,
    SOURCE,
    Manifest,
    entry_id,
    read_manifest,
    sha256_of,
    write_manifest,
)


def refuse_inside_agent(action: str) -> None:
    """Raise ``IngestRefusedError`` when ``tether ingest ACTION`` runs inside an agent's tree."""
    refuse_action(f"ingest {action}", error=IngestRefusedError)


def quarantine_view(ids: list[str]) -> list[str]:
    """What of quarantine/ may be shown here: nothing of it to an agent, not even its names."""
    if inside_agent() is None:
        return ids
    return [f"({len(ids)} not released)"] if ids else []


@dataclass(frozen=True)
class Collected:
    """A path collected into quarantine/ as a new entry."""

    id: str
    kind: str  # SOURCE or BUNDLE
    size: int  # bytes copied
    sha256: str
    skipped: tuple[Skipped, ...] = ()  # what of a bundle was left out

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "status": "collected",
            "kind": self.kind,
            "size": self.size,
            "sha256": self.sha256,
        }
        if self.kind == BUNDLE:
            out["skipped"] = [s.to_dict() for s in self.skipped]
        return out


@dataclass(frozen=True)
class Duplicate:
    """A path whose contents an entry already holds: nothing was collected."""

    id: str  # the entry that holds them
    of: str  # its folder

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "status": "duplicate", "of": self.of}


@dataclass(frozen=True)
class Released:
    """One entry named to ``release``: moved to incoming/, or stopped by a name collision."""

    id: str
    status: Literal["released", "collision"]

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class Intake(QueueFolders):
    def collect(
        self, path: Path, *, capture: dict[str, Any] | None = None
    ) -> Collected | Duplicate:
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
        # secrets.token_hex(6), without loading secrets (random, base64, hmac)
        temp = self.quarantine / f".collect-{os.urandom(6).hex()}"
        temp.mkdir()
        target = self.quarantine / name
        try:
            skipped: tuple[Skipped, ...] = ()
            if kind == BUNDLE:
                copied = copy_bundle(source, temp / name)
                digest, size = copied.sha256, copied.size
                skipped = tuple(copied.skipped)
            else:
                shutil.copyfile(source, temp / name)
                digest, size = sha256_of(temp / name)
            duplicate = self.with_digest(digest)
            if duplicate is not None:
                shutil.rmtree(temp, ignore_errors=True)
                return Duplicate(duplicate.id, str(duplicate.folder))
            if target.exists() or (self.incoming / name).exists():
                raise HumanStopError(
                    f"stop: an entry named {name!r} already exists "
                    f"({'quarantine' if target.exists() else 'incoming'}); nothing was "
                    f"overwritten. Rename the file or finish the other entry first."
                )
            fields: dict[str, Any] = {
                "id": name,
                "kind": kind,
                "name": name,
                "origin": str(source.resolve()),
                "size": size,
                "sha256": digest,
                "collected_at": now_stamp(),
                "collected_by": _who(),
                "released_at": None,
                "capture": capture,
                "sync_exit": None,
                "ticket": None,
            }
            if kind == BUNDLE:
                fields["skipped"] = [s.to_dict() for s in skipped]
            write_manifest(temp, Manifest.parse(fields))
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
        fsync_dir(self.quarantine)
        return Collected(name, kind, size, digest, skipped)

    def release(self, ids: list[str]) -> list[Released]:
        """Human action: move entries from quarantine/ to incoming/; a name already there is a stop.

        Refused (``IngestRefusedError``) inside an agent's process tree.
        """
        refuse_inside_agent("release")
        results: list[Released] = []
        self.incoming.mkdir(parents=True, exist_ok=True)
        for given in ids:
            folder = self.child(self.quarantine, given)
            if not (folder / MANIFEST).is_file():
                raise UsageError(
                    f"no entry {given!r} in quarantine/ (`tether ingest status` lists them)"
                )
            results.append(Released(folder.name, self._release(folder)))
        fsync_dir(self.incoming)
        stops = [r.id for r in results if r.status == "collision"]
        if stops:
            raise HumanStopError(
                f"stop: {', '.join(stops)} already in incoming/ (or being ingested); nothing was "
                f"overwritten. Rename or finish the other entry, then release again.",
            )
        return results

    def _release(self, folder: Path) -> Literal["released", "collision"]:
        name = folder.name
        if (self.incoming / name).exists() or (self.claimed / name).exists():
            return "collision"
        write_manifest(folder, read_manifest(folder).changed(released_at=now_stamp()))
        try:
            folder.rename(self.incoming / name)
        except OSError:
            return "collision"
        return "released"


def _who() -> str:
    import getpass

    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return f"uid {os.getuid()}"
