"""On by default; off only when the person says so, and then every record says it.

Also: a machine where no sandbox can start refuses the run with the fix
(exit 3), and a bad ``[sandbox]`` table is one line, exit 3.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from tests.sandbox.conftest import SandboxProject, sh

from tether.sandbox.hosts import Host, HostError, host_of_url, parse_host


def test_a_run_is_sandboxed_with_no_setting_at_all(sandbox_project: SandboxProject) -> None:
    p = sandbox_project
    assert "[sandbox]" not in (p.root / "tether.toml").read_text()
    p.configure([sh(f"touch {p.outside}/reached")])
    done, record = p.run()
    assert done.returncode == 0, done.stderr
    assert record["sandbox"] == "bubblewrap"
    assert not (p.outside / "reached").exists()


@pytest.mark.parametrize("how", ["flag", "config"])
def test_an_unsandboxed_run_says_so_everywhere(sandbox_project: SandboxProject, how: str) -> None:
    p = sandbox_project
    extra = '[sandbox]\nmode = "off"\n' if how == "config" else ""
    p.configure([sh(f"touch {p.outside}/reached"), "false"], extra=extra)
    flags = ("--no-sandbox",) if how == "flag" else ()
    done, record = p.run("--iterations", "2", *flags)
    assert done.returncode == 20, done.stderr
    # no sandbox: the agent reached outside its work folder
    assert (p.outside / "reached").exists()
    why = "--no-sandbox" if how == "flag" else '[sandbox] mode = "off"'
    assert record["sandbox"].startswith(f"off: {why}")
    report = record["report"]
    assert report["sandbox"]["mode"] == "off"
    markdown = Path(record["run_dir"], "report.md").read_text()
    assert "- sandbox: none, the agent ran unsandboxed" in markdown
    plain = p.tether("run", "--prompt", "go", "--iterations", "2", *flags)
    assert "sandbox: none, the agent ran unsandboxed" in plain.stdout
    status = p.tether("status", "--json")
    ended = json.loads(status.stdout)["ended"]
    assert ended and all(r["sandbox"].startswith("off: ") for r in ended)
    wide = p.tether("status", env={"COLUMNS": "200"})  # the marker is not wrapped
    assert "UNSANDBOXED" in wide.stdout


def test_no_sandbox_here_refuses_the_run_with_the_fix(sandbox_project: SandboxProject) -> None:
    p = sandbox_project
    missing = {"TETHER_BWRAP": str(p.outside / "no-bwrap")}
    done = p.tether("run", "--prompt", "go", env=missing)
    assert done.returncode == 3
    (line,) = done.stderr.strip().splitlines()
    assert "cannot start the run's sandbox" in line
    assert "apt install bubblewrap" in line and "--no-sandbox" in line
    listed = p.tether("runs", "list", "--json")
    assert json.loads(listed.stdout) == []
    done = p.tether("run", "--prompt", "go", "--no-sandbox", env=missing)
    assert done.returncode == 0, done.stderr


def test_a_bubblewrap_that_cannot_start_is_named(sandbox_project: SandboxProject) -> None:
    failing = sandbox_project.outside / "bwrap"
    failing.write_text(
        "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n"
    )
    failing.chmod(0o755)
    done = sandbox_project.tether("run", "--prompt", "go", env={"TETHER_BWRAP": str(failing)})
    assert done.returncode == 3
    (line,) = done.stderr.strip().splitlines()
    assert "No permissions to create new namespace" in line
    assert "unprivileged_userns_clone" in line


@pytest.mark.parametrize(
    ("table", "said"),
    [
        ('[sandbox]\nallow_host = ["x.org"]\n', "unknown key `sandbox.allow_host`"),
        ('[sandbox]\nallow_hosts = ["http://x.org/"]\n', "is not a host name"),
        ('[sandbox]\nallow_hosts = ["x.org:99999"]\n', "no valid port"),
        ('[sandbox]\nmode = "maybe"\n', "sandbox.mode"),
    ],
)
def test_a_bad_sandbox_table_is_one_line_exit_3(
    sandbox_project: SandboxProject, table: str, said: str
) -> None:
    sandbox_project.configure(["true"], extra=table)
    done = sandbox_project.tether("run", "--prompt", "go")
    assert done.returncode == 3
    (line,) = done.stderr.strip().splitlines()
    assert said in line


def test_allowed_hosts_are_checked_by_name_and_port() -> None:
    assert parse_host("api.example.com") == Host("api.example.com")
    assert parse_host("API.Example.com:8443") == Host("api.example.com", 8443)
    assert parse_host("[::1]:8080") == Host("::1", 8080)
    assert parse_host("*.githubcopilot.com:443").allows("api.githubcopilot.com", 443)
    assert not parse_host("*.githubcopilot.com:443").allows("githubcopilot.com.evil.org", 443)
    assert not parse_host("127.0.0.1:8080").allows("127.0.0.1", 8081)
    assert host_of_url("https://api.anthropic.com") == Host("api.anthropic.com", 443)
    assert host_of_url("http://127.0.0.1:4000/v1") == Host("127.0.0.1", 4000)
    assert host_of_url("ftp://x") is None
    for bad in ("", "a b", "x.org:0", "http://x.org", "user@x.org", "x..org", "[::1"):
        with pytest.raises(HostError):
            parse_host(bad)


def test_programs_installed_under_a_private_root_still_run_inside(
    sandbox_project: SandboxProject,
) -> None:
    """A clone in /tmp with its virtual environment and pinned CLIs keeps working.

    The sandbox's /tmp starts empty; a PATH folder under it, and what its
    links point into next to it (``node_modules/.bin`` → ``node_modules``),
    stay visible, read-only.
    """
    p = sandbox_project
    tools = Path(tempfile.mkdtemp(prefix="tether-tools-", dir="/tmp"))
    try:
        (tools / "lib").mkdir()
        (tools / "bin").mkdir()
        script = tools / "lib" / "hello.sh"
        script.write_text("#!/bin/sh\necho hello from lib > said\n", encoding="utf-8")
        script.chmod(0o755)
        (tools / "bin" / "hello").symlink_to("../lib/hello.sh")
        p.configure(["hello", sh(f"touch {tools}/lib/written")])
        path = f"{tools / 'bin'}{os.pathsep}{os.environ['PATH']}"
        done, record = p.run(env={"PATH": path})
        assert done.returncode == 0, done.stderr
        assert record["sandbox"] == "bubblewrap"
        assert (p.root / "said").read_text() == "hello from lib\n"
        assert not (tools / "lib" / "written").exists()  # seen, never writable
    finally:
        shutil.rmtree(tools)
