"""The run's outbox folder: the variable that names it, its files and their limits.

Shared by the run that writes proposals (``propose``) and the supervisor that
collects them (``collect``); kept apart from both so that the supervisor, which
only names the folder and collects it, does not import the proposal checks.
"""

from __future__ import annotations

OUTBOX_ENV = "TETHER_OUTBOX_DIR"
FILE_SUFFIX = ".proposal.json"
MAX_MESSAGE = 2000
MAX_PER_RUN = 20  # proposals one run may leave; more are refused at once
