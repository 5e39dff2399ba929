"""A real ``tether dashboard`` process and a real headless Chromium (Debian's, no downloads)."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from tests.status.world import World, build

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
URL_LINE = re.compile(r"^tether dashboard: (http://\S+)$")
# What ``chromium`` opens with; a shared browser is set back to it before each test.
WINDOW = (1400, 1000)


@dataclass
class Dashboard:
    proc: subprocess.Popen[str]
    url: str  # with the token

    @property
    def base(self) -> str:
        return self.url.split("/?", 1)[0]

    @property
    def token(self) -> str:
        return self.url.rsplit("token=", 1)[1]

    def get(self, path: str, *, token: bool = True) -> tuple[int, bytes]:
        """GET with the token (as the printed URL has it), following the page's trade of the
        token for a session cookie as a browser does."""
        sep = "&" if "?" in path else "?"
        target = f"{self.base}{path}" + (f"{sep}token={self.token}" if token else "")
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
        try:
            with opener.open(target, timeout=10) as answer:
                return int(answer.status), answer.read()
        except urllib.error.HTTPError as exc:
            return int(exc.code), exc.read()

    def stop(self) -> str:
        """Ctrl-C it; what it wrote to stderr."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        try:
            _, err = self.proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _, err = self.proc.communicate()
        return err


def tether_argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "tether.cli.main", *args]


def start_dashboard(project: Path, env: dict[str, str], *args: str) -> Dashboard:
    proc = subprocess.Popen(
        tether_argv("dashboard", "--port", "0", *args),
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        found = URL_LINE.match(line.strip())
        if found:
            return Dashboard(proc, found.group(1))
    proc.kill()
    _, err = proc.communicate()
    raise AssertionError(f"tether dashboard did not print its URL: {err}")


def chromium(download_dir: Path) -> Any:
    """A headless Chromium driven by Debian's chromedriver, with its console log kept."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    for needed in (CHROMIUM, CHROMEDRIVER):
        if not needed.exists():
            raise AssertionError(
                f"{needed} is missing: apt-get install -y chromium chromium-driver (.ci/run does)"
            )
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    profile = download_dir / "chromium-profile"
    profile.mkdir(parents=True, exist_ok=True)
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        f"--window-size={WINDOW[0]},{WINDOW[1]}",
        f"--user-data-dir={profile}",
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = Service(executable_path=str(CHROMEDRIVER), log_output=os.devnull)
    return webdriver.Chrome(options=options, service=service)


def _reset(driver: Any) -> None:
    """Set a used Chromium back to what a new one shows a test: a blank page at the
    window size it starts with, no cookies, the system's colour scheme, an empty
    console log. Each test's dashboard is a new origin (its own port), so no page
    storage or cache entry of an earlier test applies to it."""
    driver.get("about:blank")
    driver.set_window_size(*WINDOW)
    driver.execute_cdp_cmd("Network.clearBrowserCookies", {})
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})
    driver.get_log("browser")


@pytest.fixture(scope="session")
def shared_chromium(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One headless Chromium per test process: its start costs about 2 s of CPU, paid
    once instead of once per test (``browser``)."""
    driver = chromium(tmp_path_factory.mktemp("chromium"))
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture
def browser(shared_chromium: Any) -> Iterator[Any]:
    """The process's Chromium, set back to a new one's state for this test.

    The tests that are about the browser's own state across pages (the session
    cookie against another origin, the hostile pages) start a Chromium of their own."""
    _reset(shared_chromium)
    try:
        yield shared_chromium
    finally:
        # before the test's dashboard stops: its live page would keep reconnecting
        shared_chromium.get("about:blank")


def have_tmux() -> bool:
    return shutil.which("tmux") is not None


def png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


def _own_environment(root: Path) -> dict[str, str]:
    """What the autouse ``tether_home`` fixture gives one test (its own tether home, HOME
    and no user configuration), for a process that serves a whole module's tests."""
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith("TETHER_") and not name.startswith("XDG_")
    }
    home = root / "user-home"
    home.mkdir()
    env |= {
        "TETHER_HOME": str(root / "tether-home"),
        "TETHER_USER_CONFIG": str(root / "no-user-config.toml"),
        "HOME": str(home),
    }
    return env


@pytest.fixture(scope="module")
def reading_dashboard(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dashboard]:
    """One dashboard on ``build``'s world for the module's tests that change nothing in it
    (each trades the token for a session of its own): a dashboard's start costs about
    1 s of CPU."""
    root = tmp_path_factory.mktemp("reading-dashboard")
    env = _own_environment(root)
    made = build(Path(env["TETHER_HOME"]), root / "project")
    try:
        running = start_dashboard(made.project, env)
        try:
            yield running
        finally:
            running.stop()
    finally:
        made.close()


@pytest.fixture
def dashboard(world: World) -> Iterator[Dashboard]:
    """A dashboard on ``world``'s project, stopped after the test."""
    running = start_dashboard(world.project, dict(os.environ))
    try:
        yield running
    finally:
        running.stop()
