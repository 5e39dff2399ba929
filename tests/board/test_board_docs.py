"""docs/reference/board.md agrees with the code: its example loads, its tables match."""

from __future__ import annotations

import re
from pathlib import Path

from tests.board.conftest import tether

from tether.board import REASONS, Board, State
from tether.board.ticket import KEY_ORDER

DOC = Path(__file__).resolve().parents[2] / "docs" / "reference" / "board.md"
TEXT = DOC.read_text(encoding="utf-8")


def test_the_example_ticket_loads_where_the_page_says(tmp_path: Path) -> None:
    (example,) = re.findall(r"^```markdown\n(.*?)^```$", TEXT, flags=re.DOTALL | re.MULTILINE)
    where = re.search(r"That file is `tickets/(.+?)`", TEXT)
    assert where is not None
    path = tmp_path / "tickets" / where.group(1)
    path.parent.mkdir(parents=True)
    path.write_text(example, encoding="utf-8")
    view = Board(tmp_path / "tickets").load()
    assert view.malformed == ()
    (ticket,) = view.tickets
    assert (ticket.state, ticket.reason, ticket.priority) == (State.BLOCKED, "lock", "P1")
    assert ticket.check == ["test", "!", "-e", "/var/lock/deploy.lock"]


def test_the_reason_table_is_the_code() -> None:
    rows = re.findall(r"^\| `([A-Z]+)` \| (.*?) \|", TEXT, flags=re.MULTILINE)
    table = {state: re.findall(r"`([a-z-]+)`", reasons) for state, reasons in rows}
    assert list(table) == [s.value for s in State]
    for state in State:
        assert tuple(table[state.value]) == REASONS.get(state, ())


def test_every_known_key_is_documented() -> None:
    documented = set(re.findall(r"^\| `([a-z_]+)`", TEXT, flags=re.MULTILINE))
    assert set(KEY_ORDER) <= documented


def test_every_documented_command_exists(tmp_path: Path) -> None:
    commands = set(re.findall(r"^tether board ([a-z]+)", TEXT, flags=re.MULTILINE))
    assert commands == {
        "init",
        "add",
        "show",
        "list",
        "move",
        "approve",
        "triage",
        "import",
        "export",
    }
    helped = tether("board", "--help", cwd=tmp_path)
    for command in commands:
        assert re.search(rf"^  {command}\b", helped.stdout, flags=re.MULTILINE), command
