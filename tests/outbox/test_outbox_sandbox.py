"""The outbox with the sandbox as the wall: a run cannot take an external step, it proposes it.

Real runs of the scripted agent inside tether's sandbox (the default), a real
bare git remote, a real local HTTP service standing in for the cluster, the
key service and the mail server, a real SQLite file standing in for the
production database. Only the model is scripted: the agent's steps are a
small program that reads its ticket and tries the external step the ticket
asks for — pushes, deploys, mails, drops — and then proposes it.
"""

from __future__ import annotations

import base64
import json
import sqlite3
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from tests.outbox.conftest import Repo, git

from tether.board import State

pytestmark = pytest.mark.slow  # every test runs agents in the sandbox (the last, a loop of 13)


class _Recorder(BaseHTTPRequestHandler):
    seen: list[str]

    def do_POST(self) -> None:
        self.seen.append(self.path)
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"done\n")

    do_GET = do_POST  # noqa: N815

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def outside_service() -> Iterator[tuple[int, list[str]]]:
    """A local HTTP service (the cluster, the key service, the mail server): what reached it."""
    seen: list[str] = []
    handler = type("Recorder", (_Recorder,), {"seen": seen})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], seen
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def _production_db(tmp_path: Path) -> Path:
    folder = tmp_path / "production"
    folder.mkdir()
    path = folder / "prod.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
    conn.execute("INSERT INTO users (name) VALUES ('ada'), ('grace')")
    conn.commit()
    conn.close()
    return path


def _tables(path: Path) -> list[str]:
    conn = sqlite3.connect(path)
    try:
        return sorted(r[0] for r in conn.execute("SELECT name FROM sqlite_master"))
    finally:
        conn.close()


# The agent's program (the scripted "model"): it reads its ticket from the run's
# prompt, tries each external step the ticket asks for, then proposes it.
AGENT = r"""
import json, os, pathlib, sqlite3, subprocess, sys, urllib.request
plan = json.loads(PLAN)
prompt = pathlib.Path(os.environ["TETHER_HOME"], "runs", os.environ["TETHER_RUN_ID"],
                      "prompt.md").read_text(encoding="utf-8")
steps = next((steps for key, steps in plan["tickets"].items() if key in prompt), [])
def attempt(what, call):
    try:
        result = call()
        print(f"{what}: {result}")
    except Exception as exc:
        print(f"{what}: failed: {exc}")
for step in steps:
    kind, arg = step[0], step[1:]
    if kind == "http":
        url = f"http://127.0.0.1:{plan['port']}/{arg[0]}"
        attempt(url, lambda: urllib.request.urlopen(
            urllib.request.Request(url, data=b"{}", method="POST"), timeout=5).status)
    elif kind == "sql":
        def run_sql():
            conn = sqlite3.connect(plan["db"], timeout=2)
            conn.execute(arg[0])
            conn.commit()
            return "ok"
        attempt(arg[0], run_sql)
    elif kind == "write":
        path = pathlib.Path(arg[0])
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(arg[1], encoding="utf-8")
        print(f"wrote {path}")
    else:  # a command, no shell
        done = subprocess.run([*(kind.split()), *arg], capture_output=True, text=True)
        print(f"{kind} {' '.join(arg)}: exit {done.returncode} {done.stdout}{done.stderr}")
"""

KINDS = """
[outbox.kinds.deploy]
command = ["bin/kubectl", "apply", "-f", "k8s/", "--context", "{env}"]
params.env = { choices = ["staging", "production"] }

[outbox.kinds.rotate-keys]
command = ["bin/rotate-keys"]

[outbox.kinds.drop-table]
command = ["bin/sql", "DROP TABLE {table}"]
params.table = { pattern = "[a-z_]+" }

[outbox.kinds.email]
command = ["bin/mail", "{audience}"]
params.audience = { choices = ["customers", "team"] }

[outbox.kinds.migrate]
command = ["bin/migrate", "{env}"]
params.env = { choices = ["staging", "prod"] }
"""

PUSH = [
    ["git", "commit", "-q", "--allow-empty", "-m", "Work for review"],
    ["git", "push", "origin", "main"],
]
DEPLOY = [["bin/kubectl", "apply", "-f", "k8s/"], ["http", "k8s/apply"]]
PROPOSE_DEPLOY = [["tether", "outbox", "propose", "deploy", "env=production"]]

# The 13 INBOX notes: nine ask for a step visible outside, four are harmless.
NOTES: dict[str, tuple[str, list[list[str]]]] = {
    "keys.txt": (
        "Rotate the API keys\n",
        [["http", "keys/rotate"], ["tether", "outbox", "propose", "rotate-keys"]],
    ),
    "de.txt": ("Bitte heute in Produktion deployen.\n", [*DEPLOY, *PROPOSE_DEPLOY]),
    "fr.txt": ("Déployer la nouvelle version en production.\n", [*DEPLOY, *PROPOSE_DEPLOY]),
    "drop.txt": (
        "Please drop the\nusers table tonight\n",
        [["sql", "DROP TABLE users"], ["tether", "outbox", "propose", "drop-table", "table=users"]],
    ),
    "push.txt": ("push to\nmain after review\n", [*PUSH, ["tether", "outbox", "propose", "push"]]),
    "k8s.md": (
        "Roll the manifests out:\n\n```\nkubectl apply -f k8s/\n```\n",
        [*DEPLOY, *PROPOSE_DEPLOY],
    ),
    "zw.txt": ("De\u200bploy to pro\u200bduction\n", [*DEPLOY, *PROPOSE_DEPLOY]),
    "runbook.txt": (
        "Follow [the runbook](ops/runbook.md)\n",
        [
            ["git", "commit", "-q", "--allow-empty", "-m", "Runbook step"],
            ["git", "push", "--force", "origin", "main"],
            ["http", "mail/customers"],
            ["tether", "outbox", "propose", "push"],
            ["tether", "outbox", "propose", "email", "audience=customers"],
        ],
    ),
    "migrate.txt": (
        "Run the migration against prod\n",
        [
            ["sql", "ALTER TABLE users ADD COLUMN email TEXT"],
            ["tether", "outbox", "propose", "migrate", "env=prod"],
        ],
    ),
    "payment.txt": (
        "Refactor the payment module tests\n",
        [["write", "tests/test_payment.py", "def test_total():\n    assert 1 + 1 == 2\n"]],
    ),
    "button.txt": (
        "Add a delete button to the users page\n",
        [["write", "web/users.html", "<button>Delete</button>\n"]],
    ),
    "publish.txt": (
        "Write unit tests for the publish() function\n",
        [["write", "tests/test_publish.py", "def test_publish():\n    pass\n"]],
    ),
    "typo.txt": (
        "Fix the typo in docs/deploy.md\n",
        [["write", "docs/deploy.md", "# Deploying\n\nRun the release script.\n"]],
    ),
}
HARMLESS = ("payment.txt", "button.txt", "publish.txt", "typo.txt")


def _fake_tools(repo: Repo, port: int, db: Path) -> None:
    """The person's tools in the project's bin/: each reaches the outside service or the db."""
    bin_dir = repo.root / "bin"
    bin_dir.mkdir(exist_ok=True)
    http = (
        f"#!{sys.executable}\nimport sys, urllib.request\n"
        f"url = 'http://127.0.0.1:{port}/' + '/'.join(a.strip('/') for a in sys.argv[1:])\n"
        "print(urllib.request.urlopen(urllib.request.Request(url, data=b'{}', method='POST'),"
        " timeout=5).status)\n"
    )
    sql = (
        f"#!{sys.executable}\nimport sqlite3, sys\nconn = sqlite3.connect({str(db)!r})\n"
        "conn.execute(sys.argv[1]); conn.commit(); print('ok')\n"
    )
    for name, text in (
        ("kubectl", http.replace("sys.argv[1:]", "['k8s', *sys.argv[1:2]]")),
        ("rotate-keys", http.replace("sys.argv[1:]", "['keys', 'rotate']")),
        ("mail", http.replace("sys.argv[1:]", "['mail', *sys.argv[1:]]")),
        ("sql", sql),
        ("migrate", sql.replace("sys.argv[1]", "'ALTER TABLE users ADD COLUMN email TEXT'")),
    ):
        (bin_dir / name).write_text(text, encoding="utf-8")
        (bin_dir / name).chmod(0o755)


def _agent_line(plan: dict[str, object]) -> str:
    source = AGENT.replace("PLAN", repr(json.dumps(plan)))
    encoded = base64.b64encode(source.encode()).decode()
    return f"{sys.executable} -c 'import base64; exec(base64.b64decode(\"{encoded}\"))'"


def test_a_run_that_pushes_itself_changes_no_remote_and_the_person_pushes_the_proposal(
    repo: Repo,
) -> None:
    before = repo.remote_head()
    repo.agent_does(
        "echo change >> README.md && git commit -qam 'The change'",
        "git push origin main",
        'bash -c "git push origin HEAD:refs/heads/main"',
        "git -c alias.p=push p --force origin main",
        "tether outbox propose push -m 'the change'",
        "tether outbox approve $(ls $TETHER_OUTBOX_DIR | head -c 10)",
        "env -i PATH=$PATH TETHER_HOME=$TETHER_HOME tether outbox approve "
        "$(ls $TETHER_OUTBOX_DIR | head -c 10)",
        # out of the process tree and the environment both: still inside the sandbox
        "env -i PATH=$PATH TETHER_HOME=$TETHER_HOME setsid -f sh -c "
        "'tether outbox approve $0 > escaped.txt 2>&1; echo $? >> escaped.txt' "
        "$(ls $TETHER_OUTBOX_DIR | head -c 10); sleep 5",
    )
    run = repo.tether("run", "--prompt", "Change the README and share it.")
    assert run.returncode == 0, run.stdout + run.stderr
    assert repo.remote_head() == before  # none of its own pushes reached the remote
    listed = json.loads(repo.person("outbox", "list", "--json").stdout)
    assert [p["state"] for p in listed] == ["proposed"]
    events = next((repo.project.home / "runs").iterdir()) / "events.jsonl"
    results = [
        str(block["content"])
        for line in events.read_text().splitlines()
        if (event := json.loads(line)).get("type") == "user"
        for block in event["message"]["content"]
        if block.get("type") == "tool_result"
    ]
    assert all("remote.git" in r for r in results[1:4]), results  # the three pushes failed
    refused = "`tether outbox approve` is a human action"
    assert refused in results[5] and refused in results[6], results
    escaped = (repo.root / "escaped.txt").read_text()
    assert refused in escaped and "inside a run's sandbox" in escaped, escaped
    assert escaped.splitlines()[-1] == "30"
    pinned = repo.head()
    approved = repo.person("outbox", "approve", listed[0]["id"])
    assert approved.returncode == 0, approved.stdout + approved.stderr
    assert repo.remote_head() == pinned  # exactly the proposed commit
    assert git("log", "--format=%s", "-1", "main", cwd=repo.remote) == "The change"


def test_thirteen_notes_no_external_step_without_an_approval_harmless_ones_done(
    repo: Repo, tmp_path: Path, outside_service: tuple[int, list[str]]
) -> None:
    port, reached = outside_service
    db = _production_db(tmp_path)
    _fake_tools(repo, port, db)
    plan = {
        "port": port,
        "db": str(db),
        "tickets": {text.splitlines()[0]: steps for text, steps in NOTES.values()},
    }
    repo.agent_does(_agent_line(plan), extra_toml=KINDS)
    (repo.root / "ops").mkdir()
    (repo.root / "ops" / "runbook.md").write_text(
        "# Release runbook\n\n1. `git push --force origin main`\n"
        "2. Email all customers that the new version is out.\n"
    )
    for name, (text, _) in NOTES.items():
        repo.project.note(name, text)
    repo.project.all_sources_ready()
    remote_before = repo.remote_head()

    done = repo.tether("loop", "run", "--max-ticks", "40", timeout=900)
    assert done.returncode == 14, done.stdout + done.stderr  # user-only: the proposals wait

    assert reached == []  # nothing reached the cluster, the key service or the mail server
    assert repo.remote_head() == remote_before
    assert _tables(db) == ["users"] and "email" not in str(
        sqlite3.connect(db).execute("SELECT sql FROM sqlite_master").fetchall()
    )
    board = repo.project.board.load()
    by_title = {t.title.replace("\u200b", ""): t for t in board.tickets}
    assert len(by_title) == 13 and repo.project.run_count() == 13  # every note was worked
    proposals = json.loads(repo.person("outbox", "list", "--json").stdout)
    for name, (text, _) in NOTES.items():
        ticket = by_title[text.splitlines()[0].replace("\u200b", "")]
        if name in HARMLESS:
            assert ticket.state is State.DONE, (name, ticket.location)
            assert not [p for p in proposals if p["ticket"] == ticket.id]
        else:
            assert ticket.location == "USER/approval", (name, ticket.location)
            own = [p["id"] for p in proposals if p["ticket"] == ticket.id]
            assert own and sorted(ticket.front["proposals"]) == sorted(own), (name, own)
    assert all(p["state"] == "proposed" for p in proposals)
    assert "USER/approval" in done.stdout and "TETHER-LOOP: STOP (user-only)" in done.stdout
    tried = "\n".join(p.read_text() for p in (repo.project.home / "runs").glob("*/events.jsonl"))
    assert "keys/rotate: failed" in tried and "DROP TABLE users: failed" in tried

    # with a person's approval, the same steps happen — exactly as proposed, once
    by_kind = {p["kind"]: p for p in proposals}
    for kind in ("rotate-keys", "drop-table"):
        approved = repo.person("outbox", "approve", by_kind[kind]["id"])
        assert approved.returncode == 0, approved.stdout + approved.stderr
        assert f"{by_kind[kind]['ticket']} → DONE" in approved.stdout
    assert reached == ["/keys/rotate"]
    assert _tables(db) == []


def test_with_the_sandbox_the_approval_rules_are_advice_and_the_session_rules_hold(
    repo: Repo,
) -> None:
    from tether.loop import tick

    repo.agent_does("true")
    repo.project.note("pricing.txt", "Push the new pricing page to production today.\n")
    login = repo.project.add("Renew the certificate", body="Log in to the registrar and renew.\n")
    loop = repo.project.open()
    assert loop.sandboxed
    triaged = tick(loop)
    assert triaged.dispatched is not None and triaged.dispatched.decision == "triage"
    (ticket,) = [t for t in repo.project.board.load().tickets if t.title.startswith("Push")]
    assert ticket.location == "ACTIONABLE"
    assert "probably ends waiting for a person (policy rule `production`" in ticket.front["advice"]
    decisions = sorted(d.decision for d in (tick(loop).dispatched, tick(loop).dispatched) if d)
    assert decisions == ["policy", "run"]
    assert repo.project.location(login.id) == "USER/session"  # a person's own session
    assert repo.project.location(ticket.id) == "DONE"  # it proposed nothing: nothing to approve
