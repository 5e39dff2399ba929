"""DBOS's own log, in a file per executor, and quiet while the database is known to be away.

During an outage DBOS's threads (queue polling, notifications, step
retries) warn on every attempt, with tracebacks: thousands of lines a
minute. While the lease keeper knows the database is away, those warnings
are held back; the file gets one line when the outage begins and one when
it ends (with how many were held).
"""

from __future__ import annotations

import logging
from pathlib import Path

LOGGER = "dbos"
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class OutageFilter(logging.Filter):
    """Drops DBOS's warnings about the connection while an outage is known."""

    def __init__(self) -> None:
        super().__init__()
        self.away = False
        self.held = 0

    def filter(self, record: logging.LogRecord) -> bool:
        if not self.away or record.levelno > logging.WARNING or record.name != LOGGER:
            return True
        self.held += 1
        return False


_filter = OutageFilter()


def log_to_file(path: Path) -> None:
    """DBOS's own log lines go to ``path``, never to the worker's terminal."""
    path.parent.mkdir(parents=True, exist_ok=True)
    logger = logging.getLogger(LOGGER)
    for handler in list(logger.handlers):
        logger.removeHandler(handler)
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    handler.addFilter(_filter)
    logger.addHandler(handler)
    logger.propagate = False


def outage_began(why: str) -> None:
    logging.getLogger(LOGGER).warning("fleet database unreachable (%s); warnings held", why)
    _filter.held = 0
    _filter.away = True


def outage_ended(seconds: float) -> None:
    _filter.away = False
    logging.getLogger(LOGGER).warning(
        "fleet database back after %.0f s; %d warning(s) held meanwhile", seconds, _filter.held
    )
