"""One unit per session, enforced: a session that ended an entry claims no other.

Only a legitimate boundary opens the next unit in the same context: a new
session id (``tether session new --reason ...`` or ``tether ingest
continue-here``, both human actions) or a fresh session. A headless run never
takes an entry that needs the user, and files a person dropped into
``incoming/`` by hand are named, never passed over in silence.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.ingest.test_queue import _waiting, kb, tether

__all__ = ["kb"]


@pytest.mark.slow
def test_same_session_next_end_next_is_refused_a_new_session_claims(
    kb: Path, tmp_path: Path
) -> None:
    ids = _waiting(kb, 3, tmp_path)
    first = tether(kb, "next", "--json", TETHER_SESSION_ID="s1")
    assert json.loads(first.stdout)["id"] == ids[0]
    assert tether(kb, "end", TETHER_SESSION_ID="s1").returncode == 0
    again = tether(kb, "next", TETHER_SESSION_ID="s1")
    assert again.returncode == 30, again.stdout
    lines = again.stderr.strip().splitlines()
    assert len(lines) == 1, again.stderr
    assert f"already worked on entry {ids[0]}" in lines[0]
    assert "/clear, then ingest" in lines[0]
    assert not (kb / "incoming" / ".claimed" / ids[1]).exists()  # nothing was claimed
    fresh = tether(kb, "next", "--json", TETHER_SESSION_ID="s2")
    assert fresh.returncode == 0, fresh.stderr
    assert json.loads(fresh.stdout)["id"] == ids[1]


def test_a_headless_run_never_gets_an_entry_that_needs_the_user(kb: Path, tmp_path: Path) -> None:
    _waiting(kb, 1, tmp_path)  # a plain source: key points to confirm with the user
    done = tether(kb, "next", TETHER_SESSION_ID="run-s", TETHER_RUN_ID="r-test")
    assert done.returncode == 41, (done.stdout, done.stderr)
    assert "needs the user" in done.stderr and "USER/decision" in done.stderr
    assert not (kb / "incoming" / ".claimed").exists() or not any(
        (kb / "incoming" / ".claimed").iterdir()
    )
    # the same entry is there for a person's session
    person = tether(kb, "next", "--json", TETHER_SESSION_ID="person")
    assert person.returncode == 0, person.stderr


def test_files_dropped_into_incoming_by_hand_are_named(kb: Path, tmp_path: Path) -> None:
    (kb / "incoming").mkdir(parents=True)
    (kb / "incoming" / "notes.md").write_text("# dropped by hand\n")
    done = tether(kb, "next", TETHER_SESSION_ID="s1")
    assert done.returncode == 0, done.stderr
    assert "nothing waits" not in done.stdout
    assert "notes.md" in done.stdout and "tether ingest collect" in done.stdout
    assert len(done.stdout.strip().splitlines()) == 1
