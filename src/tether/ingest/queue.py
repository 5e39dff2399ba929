"""The ingest queue: quarantine → (a human releases) → incoming → claimed → done.

Each entry is a folder of its own, moved from state to state by ``rename(2)``
(``tether.ingest.entry``). The queue is one object, made of one module per job:

- the folders and what is in them: ``tether.ingest.listing``;
- the human side, collect and release (refused inside an agent's process
  tree): ``tether.ingest.intake``;
- the agent side, one entry per run, claimed, accepted into ``raw/``, ended,
  and the human's requeue of a claim: ``tether.ingest.claims``;
- the manifest of an entry and whether it needs a human: ``tether.ingest.manifest``.
"""

from __future__ import annotations

from tether.ingest.claims import Claims
from tether.ingest.intake import Intake


class Queue(Intake, Claims):
    """The ingest queue of one wiki."""
