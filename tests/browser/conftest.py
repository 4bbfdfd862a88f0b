"""Browser tests of the Lovelace cards: a real Home Assistant (``scripts/demo``) and Debian's Chromium.

Run them on their own, without pytest-homeassistant-custom-component's plugin (it blocks sockets and patches HA):

    .venv/bin/python -m pytest -p no:homeassistant -p no:cacheprovider tests/browser

``scripts/test`` does that after the main suite (which leaves this folder out; see ``tests/conftest.py``). Playwright
comes from ``requirements_browser.txt``; no browser is downloaded: ``CHROMIUM`` (default ``/usr/bin/chromium``) is
launched headless. ``AGENTIC_HEMS_INTEGRATION`` may point the demo at another copy of the integration (e.g. one with
a bundle that has not landed yet); by default it uses this checkout's.

Fixtures:

- ``demo`` (session): ``scripts/demo --port <free> --dir <tmp> --json <tmp>/demo.json`` in the background, left
  running (the non-check mode) until the session ends, then stopped with SIGTERM (the driver stops HA);
- ``browser`` (session): Chromium through Playwright;
- ``dashboard`` (session): one page, logged in through HA's login page, on ``/energy-plan`` (``open_page``).

Each file has its own page(s) and ends by checking that its pages' consoles logged no error (``console_errors``).
Screenshots and the consoles (``console.log``, ``console-non-admin.log``, ``console-editor.log``) go to
``tests/browser/artifacts/`` (ignored by git); a failing test also saves the whole page there.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time
import warnings
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
DEMO_DEADLINE_S = 300.0  # the demo itself needs about 10 s; bootstrap may install first
STOP_DEADLINE_S = 60.0
UI_TIMEOUT_MS = 30_000
CONSOLE: list[str] = []  # the page's console messages and errors, saved to artifacts/console.log


@dataclass
class Demo:
    """The running demo: where it is, how to log in, and its JSON report (plans, gate decisions, ...)."""

    base: str
    username: str
    password: str
    dashboard: str
    report: dict[str, Any]
    run_dir: Path

    @property
    def garage_trace_id(self) -> str:
        """The pending garage-door command the demo leaves for an administrator."""
        decision = self.report["gates"]["garage door"]
        assert decision["outcome"] == "pending_confirmation", decision
        return str(decision["trace_id"])


# tests/conftest.py declares two async autouse fixtures for the oldest release's harness (phcc 0.13.325). Pytest-asyncio
# cannot run them here: Playwright's sync API keeps its own event loop running in this thread. The browser tests run no
# HA in this process, so they need neither: these no-ops take their place (a closer conftest's fixture wins).
@pytest.fixture(autouse=True)
def enable_event_loop_debug() -> None:
    """No in-process event loop to debug (HA runs in the demo's process)."""


@pytest.fixture(autouse=True)
def verify_cleanup() -> None:
    """No in-process HA to clean up after (HA runs in the demo's process)."""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _field(output: str, name: str) -> str:
    match = re.search(rf"^  {name}:\s+(\S+)", output, re.MULTILINE)
    assert match, f"no {name!r} line in the demo's output:\n{output}"
    return match.group(1)


@pytest.fixture(scope="session")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Demo]:
    """A real Home Assistant with agentic_hems, the "Energy plan" dashboard and a pending garage-door command."""
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} not found (apt-get install chromium chromium-driver)")
    run_dir = tmp_path_factory.mktemp("demo")
    out_path, report_path = run_dir / "demo.out", run_dir / "demo.json"
    command = [str(ROOT / "scripts" / "demo"), "--port", str(_free_port()), "--dir", str(run_dir),
               "--json", str(report_path), "--no-program-dishwasher"]
    if integration := os.environ.get("AGENTIC_HEMS_INTEGRATION"):
        command += ["--integration", integration]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("DEMO_PORT", None)
    with out_path.open("wb") as out:
        proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT,
                                env=env, start_new_session=True)
    try:
        deadline = time.monotonic() + DEMO_DEADLINE_S
        while True:
            output = out_path.read_text(errors="replace")
            if "Press Ctrl-C to stop it." in output:
                break
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"scripts/demo did not come up (exit code {proc.poll()}):\n{output}")
            time.sleep(0.5)
        if "CHECK FAILED" in output:
            pytest.fail(f"scripts/demo came up with problems:\n{output}")
        for _ in range(20):  # written just before the "keeps running" lines
            if report_path.exists():
                break
            time.sleep(0.1)
        yield Demo(base=_field(output, "URL"), username=_field(output, "Username"),
                   password=_field(output, "Password"), dashboard=_field(output, "Cards"),
                   report=json.loads(report_path.read_text()), run_dir=run_dir)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)  # the driver stops HA cleanly, then exits
            try:
                proc.wait(STOP_DEADLINE_S)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)
        # HA runs in its own session and gets SIGTERM through PDEATHSIG if the driver was killed.


@pytest.fixture(scope="session")
def browser(demo: Demo) -> Iterator[Any]:
    """Debian's Chromium, headless, through Playwright (no browser download)."""
    from playwright.sync_api import expect, sync_playwright  # noqa: PLC0415 - only in this suite

    expect.set_options(timeout=UI_TIMEOUT_MS)  # expect's own 5 s is too short on a loaded 2-core machine

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """tests/browser/artifacts/, emptied once per session."""
    shutil.rmtree(ARTIFACTS, ignore_errors=True)
    ARTIFACTS.mkdir(parents=True)
    return ARTIFACTS


def open_page(browser: Any, url: str, username: str, password: str, *, timezone_id: str,
              console: list[str]) -> tuple[Any, Any]:
    """A new browser context and page, logged in through HA's own login page on ``url`` (a dashboard), connected;
    the page's console messages and uncaught errors go to ``console`` ("<type>: <text>", "pageerror: <error>")."""
    context = browser.new_context(viewport={"width": 1400, "height": 1800}, locale="en-US", timezone_id=timezone_id)
    page = context.new_page()
    page.set_default_timeout(UI_TIMEOUT_MS)

    def on_console(message: Any) -> None:  # an error names where it comes from (a failed load: the resource)
        where = message.location.get("url") if message.type == "error" else None
        console.append(f"{message.type}: {message.text}" + (f" [{where}]" if where else ""))

    page.on("console", on_console)
    page.on("pageerror", lambda e: console.append(f"pageerror: {e}"))
    page.goto(url)
    page.locator("input[name=username]").fill(username)
    page.locator("input[name=password]").fill(password)
    page.locator("input[name=password]").press("Enter")
    path = re.escape(url.split("://", 1)[-1].split("/", 1)[-1].split("?")[0])
    page.wait_for_url(re.compile(rf"/{path}(/[^?]*)?$"))
    page.wait_for_function("() => { const el = document.querySelector('home-assistant');"
                           " return !!(el && el.hass && el.hass.connected); }")
    return context, page


# HA's frontend before 20260930 (HA 2026.4's 20260325) leaves the View Transition API's AbortError unhandled when a
# navigation starts a transition before the previous one ended (20260930 catches it: ``ready.catch``), and its
# unhandled-rejection logger then fails to parse that DOMException. Neither comes from the cards, whose bundle uses no
# view transitions; the logger's failure is only passed over right after the transition's error.
SKIPPED_TRANSITION = "pageerror: Transition was skipped. New ViewTransition started"
UNPARSEABLE_REJECTION = ("error: Failure writing unhandled promise rejection to system log: Error: Cannot parse given "
                         "Error object")


def settles(read: Any, wanted: Any, timeout_ms: int = UI_TIMEOUT_MS) -> None:
    """Assert that ``read()`` returns ``wanted`` within ``timeout_ms``: for values that ``expect`` cannot read (a
    custom element's JS properties), which HA may be re-rendering when first read."""
    deadline = time.monotonic() + timeout_ms / 1000
    while (got := read()) != wanted and time.monotonic() < deadline:
        time.sleep(0.2)
    assert got == wanted


def console_errors(console: list[str]) -> list[str]:
    """The errors among a page's console lines: console.error calls, failed resource loads (Chromium logs them as
    errors) and uncaught exceptions or rejections (pageerror); except HA 2026.4's frontend's own view-transition
    rejection (see SKIPPED_TRANSITION)."""
    errors: list[str] = []
    after_transition = False
    for line in console:
        if not line.startswith(("error: ", "pageerror: ")):
            continue
        if line == SKIPPED_TRANSITION or (after_transition and line.startswith(UNPARSEABLE_REJECTION)):
            after_transition = line == SKIPPED_TRANSITION
            continue
        after_transition = False
        errors.append(line)
    return errors


@pytest.fixture(scope="session")
def dashboard(browser: Any, demo: Demo, artifacts: Path) -> Iterator[Any]:
    """One page, logged in as the demo's owner through HA's own login page, showing /energy-plan."""
    # The home's zone (scripts/demo: Europe/Brussels), so that the cards' times match the demo's printed plans.
    context, page = open_page(browser, demo.dashboard, demo.username, demo.password, timezone_id="Europe/Brussels",
                              console=CONSOLE)
    try:
        _cards_defined(page, artifacts)
        yield page
    finally:
        (artifacts / "console.log").write_text("\n".join(CONSOLE) + "\n")
        context.close()


CARDS = ("schedule", "trace", "ask", "runs")  # the bundle's cards, agentic-hems-<name>-card
DEFINED = "names => names.every(name => customElements.get(`agentic-hems-${name}-card`))"


def _cards_defined(page: Any, artifacts: Path) -> None:
    """Wait until the page has defined the four cards; if it has not within UI_TIMEOUT_MS, reload it once.

    Twice on a loaded machine the session's first page showed HA's "Configuration error" for every card (the bundle's
    module never ran) and a reload was not tried. The first load's console moves to artifacts/console-first-load.log
    with a warning, so that the cause is on record, and the cards' own tests judge the reloaded page.
    """
    from playwright.sync_api import TimeoutError as PlaywrightTimeout  # noqa: PLC0415 - only in this suite

    try:
        page.wait_for_function(DEFINED, arg=list(CARDS), timeout=UI_TIMEOUT_MS)
        return
    except PlaywrightTimeout:
        (artifacts / "console-first-load.log").write_text("\n".join(CONSOLE) + "\n")
        CONSOLE.clear()
    warnings.warn("the cards were not defined on the first load of the dashboard; reloaded once (the first load's "
                  "console: tests/browser/artifacts/console-first-load.log)", stacklevel=1)
    page.reload()
    page.wait_for_function(DEFINED, arg=list(CARDS), timeout=UI_TIMEOUT_MS)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    """Keep each phase's report on the item, for the failure screenshot below."""
    report = yield
    setattr(item, f"report_{report.when}", report)
    return report


@pytest.fixture(autouse=True)
def screenshot_on_failure(request: pytest.FixtureRequest) -> Iterator[None]:
    """Save the whole page as artifacts/FAILED-<test>.png when a test that used a logged-in page fails (the
    ``dashboard`` fixture here, the modules' ``page`` or ``owner`` where those are pages)."""
    yield
    report = getattr(request.node, "report_call", None)
    if report is None or not report.failed:
        return
    for name in ("dashboard", "page", "owner"):
        if name in request.fixturenames and hasattr(page := request.getfixturevalue(name), "screenshot"):
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            try:
                page.screenshot(path=str(ARTIFACTS / f"FAILED-{request.node.name}.png"), full_page=True)
            except Exception:  # noqa: BLE001 - best effort; the test's own failure is what matters
                pass
            return


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """With pytest-homeassistant-custom-component's plugin on (sockets blocked, HA patched), skip with the command."""
    if not config.pluginmanager.has_plugin("homeassistant"):
        return
    skip = pytest.mark.skip(reason="the browser tests run on their own: .venv/bin/python -m pytest -p no:homeassistant "
                                   "-p no:cacheprovider tests/browser")
    for item in items:
        if Path(str(item.path)).is_relative_to(Path(__file__).parent):
            item.add_marker(skip)
