"""``tether dashboard`` over plain HTTP: the token, read-only routes, paging, bad input."""

from __future__ import annotations

import json
import os
import socket
import subprocess
from pathlib import Path

from tests.dashboard.support import Dashboard, start_dashboard, tether_argv
from tests.status.world import World, add_run, at


def test_every_route_needs_the_token(dashboard: Dashboard) -> None:
    assert dashboard.base.startswith("http://127.0.0.1:")  # never another interface unasked
    assert len(dashboard.token) >= 32
    for path in ("/", "/api/status", "/api/runs", "/events", "/static/app.js", "/nowhere"):
        assert dashboard.get(path, token=False)[0] == 403, path
        code, _ = dashboard.get(path + "?token=wrong-" + dashboard.token[:8], token=False)
        assert code == 403, path
    code, page = dashboard.get("/")
    assert code == 200 and b"tether dashboard" in page
    assert dashboard.get("/static/vendor/uPlot.iife.min.js")[0] == 200
    assert dashboard.get("/static/../app.py")[0] == 404


def test_only_reads(dashboard: Dashboard) -> None:
    """The token alone never changes anything: a write needs a session and its CSRF token
    (see test_dashboard_security.py); only the outbox's decisions take one."""
    for method in ("POST", "PUT", "DELETE"):
        host, port = dashboard.base.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port))) as conn:
            conn.sendall(
                f"{method} /api/runs?token={dashboard.token} HTTP/1.1\r\nHost: {host}:{port}\r\n"
                f"Content-Length: 0\r\nConnection: close\r\n\r\n".encode()
            )
            assert b" 403 " in conn.recv(200).split(b"\r\n", 1)[0] + b" "


def test_the_status_route_is_the_status_object(dashboard: Dashboard, world: World) -> None:
    code, body = dashboard.get("/api/status")
    status = json.loads(body)
    assert code == 200 and status["home"] == str(world.home)
    assert [r["id"] for r in status["ended"]][:1] == ["r-20260302-091000-bbbbbb"]


def test_runs_filter_and_page(dashboard: Dashboard, world: World) -> None:
    for n in range(7):
        add_run(
            world.home,
            f"r-20260302-08{n:02d}00-ffff{n:02d}",
            harness="codex",
            status="tool_call_limit",
            stop_reason="tool_call_limit (sigterm)",
            started_at=at(60 + n),
            ended_at=at(59 + n),
        )
    code, body = dashboard.get("/api/runs?harness=codex&size=3&page=2")
    page = json.loads(body)
    assert code == 200 and page["total"] == 7 and page["page"] == 2
    assert [r["id"] for r in page["runs"]] == [
        "r-20260302-080300-ffff03",
        "r-20260302-080400-ffff04",
        "r-20260302-080500-ffff05",
    ]
    page = json.loads(dashboard.get("/api/runs?stop=tool_call_limit&status=tool_call_limit")[1])
    assert page["total"] == 7
    page = json.loads(dashboard.get("/api/runs?unit=T-2")[1])
    assert [r["id"] for r in page["runs"]] == ["r-20260302-090000-cccccc"]
    page = json.loads(dashboard.get("/api/runs?since=2026-03-02T09:00&until=2026-03-02T09:15")[1])
    assert [r["id"] for r in page["runs"]] == [
        "r-20260302-091000-bbbbbb",
        "r-20260302-090000-cccccc",
    ]


def test_a_run_page_has_its_report_and_chain(dashboard: Dashboard, world: World) -> None:
    add_run(
        world.home,
        "r-20260302-092100-gggggg",
        follow_up_of="r-20260302-091000-bbbbbb",
        started_at=at(9),
    )
    run = json.loads(dashboard.get("/api/runs/r-20260302-091000-bbbbbb")[1])
    assert run["run"]["status"] == "iteration_limit"
    assert "<h1>Progress report</h1>" in run["report"]["html"]
    assert run["chain"] == {"follows": [], "followed_by": ["r-20260302-092100-gggggg"]}
    follow = json.loads(dashboard.get("/api/runs/r-20260302-092100-gggggg")[1])
    assert follow["chain"]["follows"] == ["r-20260302-091000-bbbbbb"]
    assert dashboard.get("/api/runs/r-nope")[0] == 404


def test_a_port_in_use_is_one_line_and_exit_2(world: World) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        done = subprocess.run(
            tether_argv("dashboard", "--port", str(port)),
            cwd=world.project,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"tether: error: port {port} on 127.0.0.1 is in use; choose another with --port "
        f"(0: any free port)."
    ]


def test_an_unreadable_store_is_one_line_and_exit_3(tmp_path: Path, tether_home: Path) -> None:
    tether_home.mkdir()
    (tether_home / "tether.db").write_bytes(b"not a database at all" * 64)
    done = subprocess.run(
        tether_argv("dashboard", "--port", "0"),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 3
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "not a readable tether database" in lines[0]


def test_another_interface_only_when_asked_and_with_a_warning(world: World) -> None:
    running = start_dashboard(world.project, dict(os.environ), "--host", "127.0.0.2")
    try:
        assert running.base.startswith("http://127.0.0.2:")
        assert running.get("/")[0] == 200
    finally:
        err = running.stop()
    assert "warning: listening on 127.0.0.2" in err
