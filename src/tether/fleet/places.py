"""Where a fleet keeps things: its database, the projects' homes, the workers' clones, logs."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tether.config import Config
from tether.config.schema import FleetSettings


@dataclass(frozen=True)
class Places:
    database: str  # a SQLAlchemy URL
    state_dir: Path
    workdir: Path
    log_dir: Path  # DBOS's own log lines, one file per executor
    settings: FleetSettings

    @property
    def is_sqlite(self) -> bool:
        return self.database.startswith("sqlite")


def configured(config: Config) -> bool:
    """This home knows a fleet: a database is set, or the embedded one exists (cheap)."""
    settings = config.section("fleet", FleetSettings)
    return settings.database is not None or (config.home / "fleet" / "fleet.db").is_file()


def places(config: Config) -> Places:
    """The fleet's places; ``FleetDatabaseError`` (exit 3) for a database URL not usable."""
    settings = config.section("fleet", FleetSettings)
    base = config.home / "fleet"
    database = settings.database or f"sqlite:///{base / 'fleet.db'}"
    state = Path(settings.state_dir).expanduser() if settings.state_dir else base / "projects"
    work = Path(settings.workdir).expanduser() if settings.workdir else base / "work"
    url = sqlalchemy_url(database)
    check_url(url)
    if database.startswith("sqlite"):
        base.mkdir(parents=True, exist_ok=True)
    return Places(url, state, work, base / "logs", settings)


def sqlalchemy_url(url: str) -> str:
    """``postgresql://…`` through psycopg 3, the driver DBOS itself uses."""
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


def check_url(url: str) -> None:
    """A URL the fleet can use: ``postgresql://…`` or ``sqlite:///…`` (else exit 3, one line)."""
    import sqlalchemy as sa

    from tether.fleet.fleet_db import FleetDatabaseError

    try:
        parsed = sa.make_url(url)
    except Exception:
        parsed = None
    if parsed is None or parsed.get_backend_name() not in ("postgresql", "sqlite"):
        raise FleetDatabaseError(
            f"fleet database {display(url)!s} is not a postgresql://… or sqlite:///… URL "
            f"([fleet] database or TETHER_FLEET_DATABASE)"
        )


def display(url: str) -> str:
    """The URL without its password, for messages."""
    import sqlalchemy as sa

    try:
        return sa.make_url(url).render_as_string(hide_password=True)
    except Exception:
        return "(an unreadable database URL)"
