"""A real PostgreSQL 15 server for the fleet's tests and benchmark, on a Unix socket.

The server refuses to run as root, so as root it runs as the ``postgres``
system user (``runuser``); as anyone else it runs as that user.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

BINARIES = ("initdb", "pg_ctl", "postgres")


def _as_server_user(argv: list[str]) -> list[str]:
    if os.geteuid() == 0:
        return ["runuser", "-u", "postgres", "--", *argv]
    return argv


def missing_binaries() -> list[str]:
    return [b for b in BINARIES if shutil.which(b) is None]


@dataclass
class Postgres:
    folder: Path
    port: int

    def url(self, database: str = "tether_fleet") -> str:
        return f"postgresql://postgres@/{database}?host={self.folder}&port={self.port}"

    def pid(self) -> int:
        """The server's main process (the first line of ``postmaster.pid``)."""
        return int((self.folder / "data" / "postmaster.pid").read_text().split()[0])

    def halt(self) -> None:
        """Stop the server, keeping its data: the database is down until ``restart``."""
        subprocess.run(
            _as_server_user(["pg_ctl", "-D", str(self.folder / "data"), "-m", "immediate", "stop"]),
            capture_output=True,
            check=False,
        )

    def restart(self) -> None:
        """Start the server again on its data, port and socket (after ``halt``)."""
        _start_server(self.folder, self.port)

    def stop(self) -> None:
        subprocess.run(
            _as_server_user(["pg_ctl", "-D", str(self.folder / "data"), "-m", "immediate", "stop"]),
            capture_output=True,
            check=False,
        )
        shutil.rmtree(self.folder, ignore_errors=True)


def start_postgres(port: int, folder: Path | None = None) -> Postgres:
    """A new cluster in ``folder`` (default: a new temp folder), listening on its socket only."""
    folder = folder or Path(tempfile.mkdtemp(prefix="tether-pg-"))
    folder.mkdir(parents=True, exist_ok=True)
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres", "postgres")
    folder.chmod(0o755)
    data = folder / "data"
    subprocess.run(
        _as_server_user(
            ["initdb", "-D", str(data), "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8"]
        ),
        capture_output=True,
        check=True,
    )
    _start_server(folder, port)
    return Postgres(folder, port)


def _start_server(folder: Path, port: int) -> None:
    options = f"-k {folder} -p {port} -c listen_addresses='' -c fsync=off -c max_connections=200"
    subprocess.run(
        _as_server_user(
            [
                "pg_ctl",
                "-D",
                str(folder / "data"),
                "-o",
                options,
                "-l",
                str(folder / "log"),
                "-w",
                "start",
            ]
        ),
        capture_output=True,
        check=True,
    )
