"""The cards as a non-admin person sees them: English, then German, broken entry ids, server vs. local time zone.

These tests share the session's demo with ``test_cards.py`` but not its page: they run in their own browser context,
logged in as a non-admin user that the module creates over the owner's websocket (``Owner``: a token from HA's login
flow, aiohttp), so nothing they do changes what that file's page shows. pytest runs this file after ``test_cards.py``
(file order). What this module leaves in HA does not touch that file's checks in either order: a user, the
``energy-plan-errors`` dashboard, and one more garage-door decision, which the owner rejects at the end if it is still
pending (``test_cards.py`` expects nothing pending after its confirmation; the failed ask below records no run).
The tests run in file order on one page; the German ones come after the English ones. The browser runs in
America/New_York so that the user's time zone choice ("local" or "server" = Europe/Brussels) shows.

Element screenshots go to ``tests/browser/artifacts/`` as ``<card>-card-non-admin[-de|-errors].png``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import re
import secrets
import urllib.parse
import urllib.request
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from playwright.sync_api import Locator, Page, expect

from .conftest import ARTIFACTS, Demo, console_errors, open_page

CARDS = ("schedule", "trace", "ask", "runs")
RENDERED = {  # what each card shows once loaded (the cards' DOM contract)
    "schedule": (".block", ".now-marker", ".plan-summary"),
    "trace": (".decision", ".gate"),
    "ask": ("#ask-input", "#ask-submit"),
    "runs": (".stat", ".model-row"),
}
ERRORS_URL_PATH = "energy-plan-errors"
BROWSER_ZONE = "America/New_York"  # not the home's zone (scripts/demo: Europe/Brussels)
SERVER_ZONE = "Europe/Brussels"
HASS = "document.querySelector('home-assistant').hass"
CONSOLE: list[str] = []


class Owner:
    """A user over HA's websocket API (aiohttp, which HA ships), with a token from the login flow: the demo's owner,
    or the user whose ``username`` and ``password`` are given.

    Each call opens its own connection in a worker thread, away from Playwright's event loop.
    """

    def __init__(self, demo: Demo, username: str | None = None, password: str | None = None) -> None:
        self.base = demo.base.rstrip("/")
        client_id = f"{self.base}/"
        flow = self._post("/auth/login_flow", {"client_id": client_id, "handler": ["homeassistant", None],
                                               "redirect_uri": f"{self.base}/?auth_callback=1"})
        done = self._post(f"/auth/login_flow/{flow['flow_id']}",
                          {"client_id": client_id, "username": username or demo.username,
                           "password": password or demo.password})
        assert done.get("type") == "create_entry", done
        tokens = self._post("/auth/token", {"grant_type": "authorization_code", "code": done["result"],
                                            "client_id": client_id}, form=True)
        self.token = str(tokens["access_token"])
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)

    def _post(self, path: str, data: dict[str, Any], *, form: bool = False) -> dict[str, Any]:
        body = urllib.parse.urlencode(data).encode() if form else json.dumps(data).encode()
        kind = "application/x-www-form-urlencoded" if form else "application/json"
        request = urllib.request.Request(self.base + path, data=body, headers={"Content-Type": kind})
        with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310 - the local demo
            return json.loads(response.read())

    async def _session(self, messages: list[dict[str, Any]], events: bool) -> list[dict[str, Any]]:
        import aiohttp  # noqa: PLC0415 - HA's dependency, only needed here

        replies = []
        async with aiohttp.ClientSession() as session, session.ws_connect(self.base + "/api/websocket") as conn:
            assert (await conn.receive_json(timeout=10))["type"] == "auth_required"
            await conn.send_json({"type": "auth", "access_token": self.token})
            assert (await conn.receive_json(timeout=10))["type"] == "auth_ok"
            for number, message in enumerate(messages, start=1):
                await conn.send_json({"id": number, **message})
                while (reply := await conn.receive_json(timeout=30)).get("id") != number or reply["type"] != "result":
                    pass
                if events and reply.get("success"):  # a subscription: its first event is the answer
                    while (event := await conn.receive_json(timeout=30)).get("id") != number:
                        pass
                    reply = {**reply, "result": event["event"]}
                replies.append(reply)
        return replies

    def replies(self, *messages: dict[str, Any], events: bool = False) -> list[dict[str, Any]]:
        """The raw result messages (success or not)."""
        return self._pool.submit(asyncio.run, self._session(list(messages), events)).result(60)

    def ws(self, *messages: dict[str, Any], events: bool = False) -> list[Any]:
        """The results; AssertionError when a command fails."""
        out = []
        for message, reply in zip(messages, self.replies(*messages, events=events), strict=True):
            assert reply.get("success"), (message, reply)
            out.append(reply.get("result"))
        return out

    def pending(self) -> list[str]:
        """The trace ids waiting for confirmation (agentic_hems/subscribe_decisions' snapshot)."""
        snapshot = self.ws({"type": "agentic_hems/subscribe_decisions"}, events=True)[0]
        assert snapshot["type"] == "snapshot", snapshot
        return list(snapshot["pending"])

    def evaluate(self, candidate: dict[str, Any]) -> dict[str, Any]:
        return self.ws({"type": "call_service", "domain": "agentic_hems", "service": "evaluate_command",
                        "service_data": {"source_agent": "browser-test", "raw_input": f"{candidate}",
                                         "model_candidate": candidate},
                        "return_response": True})[0]["response"]

    def close(self) -> None:
        self._pool.shutdown()


@pytest.fixture(scope="module")
def owner(demo: Demo) -> Iterator[Owner]:
    client = Owner(demo)
    try:
        yield client
    finally:
        client.close()


@pytest.fixture(scope="module")
def person(owner: Owner) -> dict[str, str]:
    """A non-admin user (group system-users) with a Home Assistant login."""
    username, password = f"person{secrets.token_hex(3)}", secrets.token_urlsafe(12)
    (user,) = owner.ws({"type": "config/auth/create", "name": "Test Person", "group_ids": ["system-users"],
                        "local_only": False})
    user = user["user"]
    assert user["group_ids"] == ["system-users"], user
    owner.ws({"type": "config/auth_provider/homeassistant/create", "user_id": user["id"], "username": username,
              "password": password})
    return {"id": user["id"], "username": username, "password": password}


@pytest.fixture(scope="module")
def member(demo: Demo, person: dict[str, str]) -> Iterator[Owner]:
    """The non-admin user over the websocket API, with one assistant run of their own (a member sees only their own
    runs and commands; the owner's runs stay hidden from them)."""
    client = Owner(demo, person["username"], person["password"])
    try:
        client.ws({"type": "call_service", "domain": "agentic_hems", "service": "ask",
                   "service_data": {"text": "When is electricity cheapest?"}, "return_response": True})
        runs = client.ws({"type": "call_service", "domain": "agentic_hems", "service": "get_runs",
                          "service_data": {}, "return_response": True})[0]["response"]["runs"]
        assert [run["user_id"] for run in runs] == [person["id"]], runs
        yield client
    finally:
        client.close()


@pytest.fixture(scope="module")
def garage_trace(owner: Owner, member: Owner) -> Iterator[str]:
    """A fresh garage-door command that the non-admin user asked for, waiting for an administrator (the demo's own
    may be confirmed already); the owner rejects it at the end, so that nothing of this module's stays pending."""
    states = member.ws({"type": "get_states"})[0]
    door = next(s for s in states if s["entity_id"] == "cover.garage_door")
    intent = "close" if door["state"] == "open" else "open"
    decision = member.evaluate({"intent": intent, "device_alias": "garage door"})
    assert decision["outcome"] == "pending_confirmation", decision
    trace_id = str(decision["trace_id"])
    assert trace_id in member.pending() and trace_id in owner.pending()
    yield trace_id
    if trace_id in owner.pending():
        owner.ws({"type": "call_service", "domain": "agentic_hems", "service": "reject",
                  "service_data": {"trace_id": trace_id}})


@pytest.fixture(scope="module")
def errors_dashboard(owner: Owner, demo: Demo) -> str:
    """A second dashboard whose four cards name a config entry that does not exist."""
    owner.ws(
        {"type": "lovelace/dashboards/create", "url_path": ERRORS_URL_PATH, "title": "Energy plan errors",
         "mode": "storage", "show_in_sidebar": False, "require_admin": False},
        {"type": "lovelace/config/save", "url_path": ERRORS_URL_PATH, "config": {"views": [{
            "title": "Errors", "path": "errors",
            "cards": [{"type": f"custom:agentic-hems-{name}-card", "entry_id": "nope", "title": f"{name} (nope)"}
                      for name in CARDS]}]}},
    )
    return demo.dashboard.replace("/energy-plan", f"/{ERRORS_URL_PATH}")


@pytest.fixture(scope="module")
def page(browser: Any, demo: Demo, person: dict[str, str], artifacts: Path) -> Iterator[Page]:
    """The person's own browser context (zone America/New_York), logged in through HA's login page."""
    context, tab = open_page(browser, demo.dashboard, person["username"], person["password"],
                             timezone_id=BROWSER_ZONE, console=CONSOLE)
    wait_connected(tab)
    try:
        yield tab
    finally:
        (artifacts / "console-non-admin.log").write_text("\n".join(CONSOLE) + "\n")
        context.close()


def wait_connected(page: Page) -> None:
    page.wait_for_function("() => { const el = document.querySelector('home-assistant');"
                           " return !!(el && el.hass && el.hass.connected && el.hass.user); }")


def card(page: Page, name: str) -> Locator:
    return page.locator(f"agentic-hems-{name}-card")


def set_locale(page: Page, **changes: str) -> None:
    """Store the user's locale as HA's profile page does (frontend user data "language"), then reload."""
    page.evaluate(f"""async (changes) => {{
        const hass = {HASS};
        const locale = {{...hass.locale, ...changes}};
        await hass.connection.sendMessagePromise({{type: 'frontend/set_user_data', key: 'language', value: locale}});
    }}""", changes)
    page.reload()
    wait_connected(page)
    for key, value in changes.items():
        page.wait_for_function(f"([k, v]) => {HASS}.locale[k] === v", arg=[key, value])


def shot(locator: Locator, name: str) -> None:
    path = ARTIFACTS / name
    locator.screenshot(path=str(path), animations="disabled")
    assert path.stat().st_size > 1000


def test_non_admin_sees_every_card(page: Page, person: dict[str, str], garage_trace: str) -> None:
    """As a non-admin: the four cards render with no error, the pending command shows Confirm and Reject and the
    'administrators only' hint."""
    assert page.evaluate(f"() => {HASS}.user.is_admin") is False
    assert page.evaluate(f"() => {HASS}.user.id") == person["id"]
    page.reload()  # the command was created after the page subscribed; a fresh load must show it too
    wait_connected(page)
    for name in CARDS:
        element = card(page, name)
        for selector in RENDERED[name]:
            expect(element.locator(selector).first).to_be_attached()
        expect(element.locator(".error")).to_have_count(0)
    expect(page.locator("hui-error-card")).to_have_count(0)
    trace = card(page, "trace")
    pending = trace.locator(f'.pending[data-trace-id="{garage_trace}"]')
    expect(pending.locator("button.confirm")).to_have_text("Confirm")
    expect(pending.locator("button.reject")).to_have_text("Reject")
    expect(trace.locator(".admin-hint")).to_have_text("(administrators only)")
    for name in CARDS:
        shot(card(page, name), f"{name}-card-non-admin.png")


def test_non_admin_confirm_shows_the_error(page: Page, owner: Owner, garage_trace: str) -> None:
    """Confirm as a non-admin: the card says why (``.action-error``), the buttons come back, and the command is
    still pending for the owner."""
    trace = card(page, "trace")
    pending = trace.locator(f'.pending[data-trace-id="{garage_trace}"]')
    pending.locator("button.confirm").click()
    error = pending.locator(".action-error")
    expect(error).to_be_visible()
    expect(error).to_contain_text("Only an administrator can confirm or reject")
    expect(pending.locator("button.confirm")).to_be_enabled()
    expect(trace.locator(f'.decision[data-trace-id="{garage_trace}"]')).to_have_attribute(
        "data-outcome", "pending_confirmation")
    assert garage_trace in owner.pending()
    shot(trace, "trace-card-non-admin-confirm-error.png")


def test_unknown_entry_id_shows_an_error_in_each_card(page: Page, errors_dashboard: str) -> None:
    """``entry_id: nope`` on all four cards: each says the config entry was not found (none is blank); the ask card
    also says so when asked."""
    page.goto(errors_dashboard)
    wait_connected(page)
    for name in CARDS:
        error = card(page, name).locator(".error").first
        expect(error).to_be_visible()
        expect(error).to_contain_text("Agentic HEMS config entry not found")
    expect(card(page, "ask").locator(".error.warning")).to_contain_text("Live updates unavailable")
    ask = card(page, "ask")
    ask.locator("#ask-input").fill("Schedule all flexible loads")
    ask.locator("#ask-submit").click()
    expect(ask.locator(".ask-error")).to_contain_text("Agentic HEMS config entry not found")
    expect(ask.locator(".ask-error")).to_contain_text("nope")
    for name in CARDS:
        shot(card(page, name), f"{name}-card-errors.png")


def test_german_labels_and_numbers(page: Page, demo: Demo, garage_trace: str, errors_dashboard: str) -> None:
    """Language German (the user's profile setting): the cards' German strings and comma decimals in the
    schedule's cost rows."""
    page.goto(demo.dashboard)
    wait_connected(page)
    set_locale(page, language="de", number_format="language", time_zone="local")
    trace = card(page, "trace")
    pending = trace.locator(f'.pending[data-trace-id="{garage_trace}"]')
    expect(pending.locator("button.confirm")).to_have_text("Bestätigen")
    expect(pending.locator("button.reject")).to_have_text("Ablehnen")
    expect(trace.locator(".pending-list .section-title")).to_contain_text("Wartet auf Bestätigung")
    expect(trace.locator(".admin-hint")).to_have_text("(nur Administratoren)")
    expect(trace.locator(f'.decision[data-trace-id="{garage_trace}"] .outcome')).to_have_text(
        "wartet auf Bestätigung")
    expect(card(page, "ask").locator("#ask-submit")).to_have_text("Fragen")
    expect(card(page, "ask").locator("#ask-input")).to_have_attribute(
        "placeholder", re.compile(r"^z\. B\. Lass die Spülmaschine"))
    expect(card(page, "runs").locator('.stat[data-stat="runs"]')).to_contain_text("Läufe")

    schedule = card(page, "schedule")
    expect(schedule.locator(".plan-summary")).to_have_count(3)
    costs = schedule.locator(".plan-cost").all_inner_texts()
    savings = schedule.locator(".plan-savings").all_inner_texts()
    assert costs and all(re.fullmatch(r"-?\d+,\d\d\s€", c.strip()) for c in costs), costs
    assert all(re.fullmatch(r"spart -?\d+,\d\d\s€", s.strip()) for s in savings if s.strip()), savings
    for name in CARDS:
        expect(card(page, name).locator(".error")).to_have_count(0)
        shot(card(page, name), f"{name}-card-non-admin-de.png")

    page.goto(errors_dashboard)
    wait_connected(page)
    for name in CARDS:
        expect(card(page, name).locator(".error").first).to_contain_text(
            "Agentic-HEMS-Konfigurationseintrag nicht gefunden")


def test_german_confirm_error_is_german(page: Page, demo: Demo, garage_trace: str) -> None:
    """A German non-admin pressing Bestätigen reads why in German: the card localises the error through its
    translation_key (the server's own message is in the server's language)."""
    page.goto(demo.dashboard)
    wait_connected(page)
    pending = card(page, "trace").locator(f'.pending[data-trace-id="{garage_trace}"]')
    pending.locator("button.confirm").click()
    error = pending.locator(".action-error")
    expect(error).to_be_visible()
    shot(card(page, "trace"), "trace-card-non-admin-de-confirm-error.png")
    expect(error).to_contain_text("Nur Administratoren", timeout=2000)


def test_number_format_setting_is_followed(page: Page) -> None:
    """English with number format "decimal_comma" (HA's profile: 1.234.567,89): the schedule's costs follow it."""
    set_locale(page, language="en", number_format="decimal_comma")
    try:
        costs = card(page, "schedule").locator(".plan-cost")
        expect(costs.first).to_be_visible()
        texts = costs.all_inner_texts()
        assert all(re.search(r"\d,\d\d", c) for c in texts), texts
    finally:
        set_locale(page, language="de", number_format="language")


def _times(text: str) -> list[str]:
    return re.findall(r"\d\d:\d\d", text)


def test_time_zone_local_vs_server(page: Page) -> None:
    """The schedule's plan times follow the user's time zone setting: the browser's zone (local, New York) or the
    home's (server, Brussels)."""
    for setting, zone in (("local", BROWSER_ZONE), ("server", SERVER_ZONE)):
        set_locale(page, time_zone=setting)
        row = card(page, "schedule").locator('.plan-summary[data-appliance="Dishwasher"] .plan-time')
        expect(row).to_be_visible()
        schedule = page.evaluate(f"() => {HASS}.callWS({{type: 'agentic_hems/schedule'}})")
        plan = next(p for p in schedule["plans"] if p["name"] == "Dishwasher")
        want = [datetime.fromisoformat(plan[k]).astimezone(ZoneInfo(zone)).strftime("%H:%M") for k in ("start", "end")]
        assert _times(row.inner_text()) == want, (setting, row.inner_text(), want)
        shot(card(page, "schedule"), f"schedule-card-non-admin-de-tz-{setting}.png")
    set_locale(page, time_zone="local")


def test_a_rejection_names_no_one_else(page: Page, owner: Owner, person: dict[str, str], garage_trace: str) -> None:
    """The owner rejects the person's garage-door command: the person (German) reads live that an administrator
    rejected it, not who, their own name as who asked, the gates by their German names (the last one "Abgelehnt", not
    "Ausgeführt"), and never a user id."""
    owner.ws({"type": "call_service", "domain": "agentic_hems", "service": "reject",
              "service_data": {"trace_id": garage_trace}})
    trace = card(page, "trace")
    decision = trace.locator(f'.decision[data-trace-id="{garage_trace}"]')
    expect(decision).to_have_attribute("data-outcome", "rejected")
    expect(decision.locator(".gate-note")).to_have_text("Abgelehnt von einem Administrator.")
    expect(decision.locator('.gate[data-gate="execution"]')).to_have_attribute("title",
                                                                               "Abgelehnt von einem Administrator.")
    expect(decision.locator(".requester")).to_have_text("Test Person")
    assert decision.locator(".gate .gate-label").all_inner_texts() == [
        "Eingabeprüfung", "Gültiger Befehl", "Gerät gefunden", "Gerät kann das", "Aktueller Zustand", "Ihre Regeln",
        "Probelauf", "Abgelehnt"]  # the rejected command's Execution gate: never "✕ Ausgeführt"
    texts = trace.evaluate("el => [el.shadowRoot.textContent, ...[...el.shadowRoot.querySelectorAll('[title]')]"
                           ".map(e => e.title)].join(' ')")
    assert not re.search(r"\b[0-9a-f]{32}\b", texts), texts
    shot(trace, "trace-card-non-admin-de-rejected.png")


def test_no_console_errors(page: Page) -> None:
    """Nothing the person did logged an error in the page's console or threw, not even the refused confirmations
    (the cards show those themselves) or the broken entry ids."""
    assert console_errors(CONSOLE) == [], "\n".join(CONSOLE)
