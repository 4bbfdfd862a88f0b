"""The four Lovelace cards in Chromium against the demo's Home Assistant (issue 6).

The tests run in file order on one logged-in page (``dashboard``): the ask and confirm tests change what the runs
and trace cards show, and the screenshots follow them so that they show those results; a reload comes last.
Playwright's CSS selectors pierce the open shadow roots of HA and of the cards.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Locator, Page, expect

from .conftest import CONSOLE, Demo, console_errors

CARDS = ("schedule", "trace", "ask", "runs")
APPLIANCES = ("Dishwasher", "Washing machine", "EV charger")
ASK_REQUEST = "Schedule all flexible loads"
# What each card shows once it has loaded (the cards' DOM contract).
RENDERED = {
    "schedule": (".block", ".now-marker", ".plan-summary"),
    "trace": (".decision", ".gate.passed", ".pending"),
    "ask": ("#ask-input", "#ask-submit"),
    "runs": (".stat", ".model-row"),
}
HASS = "document.querySelector('home-assistant').hass"


def card(page: Page, name: str) -> Locator:
    return page.locator(f"agentic-hems-{name}-card")


def when(iso: str) -> datetime:
    return datetime.fromisoformat(iso.replace("Z", "+00:00"))


def plan_blocks(plan: dict[str, Any]) -> list[tuple[datetime, datetime]]:
    """A plan's running slots from agentic_hems/schedule, contiguous ones merged into one block."""
    blocks: list[tuple[datetime, datetime]] = []
    for slot in plan["slots"]:
        start, end = when(slot["start"]), when(slot["end"])
        if blocks and blocks[-1][1] == start:
            blocks[-1] = (blocks[-1][0], end)
        else:
            blocks.append((start, end))
    return blocks


def test_login_opens_the_dashboard(dashboard: Page, demo: Demo) -> None:
    """HA's login page took the demo's credentials; /energy-plan holds the four cards, none an error card."""
    assert dashboard.url.split("?")[0].startswith(demo.dashboard)
    for name in CARDS:
        expect(card(dashboard, name)).to_have_count(1)
    expect(dashboard.locator("hui-error-card")).to_have_count(0)  # e.g. "Custom element doesn't exist"


@pytest.mark.parametrize("name", CARDS)
def test_each_card_renders(dashboard: Page, demo: Demo, name: str) -> None:
    """Each card shows its elements and no ``.error``."""
    element = card(dashboard, name)
    for selector in RENDERED[name]:
        expect(element.locator(selector).first).to_be_attached()
    expect(element.locator(".error")).to_have_count(0)
    if name == "schedule":
        expect(element.locator(".plan-summary")).to_have_count(len(APPLIANCES))
    elif name == "trace":
        pending = element.locator(f'.pending[data-trace-id="{demo.garage_trace_id}"]')
        expect(pending.locator("button.confirm")).to_be_visible()
        expect(pending.locator("button.reject")).to_be_visible()
        expect(element.locator(f'.decision[data-trace-id="{demo.garage_trace_id}"]')).to_have_attribute(
            "data-outcome", "pending_confirmation")
    elif name == "runs":  # the demo asked the offline planner once
        expect(element.locator('.model-row[data-model="offline"]')).to_have_count(1)


def test_schedule_blocks_match_the_plan(dashboard: Page) -> None:
    """Per appliance, the blocks are the agentic_hems/schedule plan's slots (contiguous ones merged); tapping a
    block shows its details."""
    element = card(dashboard, "schedule")
    for attempt in range(2):  # the card fetched its schedule at page load: a re-plan since then earns one reload
        schedule = dashboard.evaluate(f"() => {HASS}.callWS({{type: 'agentic_hems/schedule'}})")
        plans = {plan["name"]: plan for plan in schedule["plans"]}
        assert set(plans) == set(APPLIANCES), schedule["plans"]
        expect(element.locator(".block").first).to_be_attached()
        shown = element.locator(".block").evaluate_all(
            "els => els.map(e => [e.dataset.appliance, e.dataset.start, e.dataset.end])")
        blocks = {name: sorted((when(start), when(end)) for appliance, start, end in shown if appliance == name)
                  for name in plans}
        wanted = {name: plan_blocks(plan) for name, plan in plans.items()}
        if blocks == wanted or attempt:
            break
        dashboard.reload()
    for name, plan in plans.items():
        assert plan["feasible"] and plan["slots"], plan
        assert blocks[name] == wanted[name], (name, blocks[name], plan["slots"])
    assert len(shown) == sum(len(b) for b in wanted.values()), shown
    summaries = element.locator(".plan-summary").evaluate_all("els => els.map(e => e.dataset.appliance)")
    assert sorted(summaries) == sorted(APPLIANCES)
    expect(element.locator(".now-marker")).to_have_count(1)

    first = element.locator(".block").first
    appliance, start = first.get_attribute("data-appliance"), first.get_attribute("data-start")
    first.click()
    details = element.locator(".block-details")
    expect(details).to_be_visible()
    expect(details).to_have_attribute("data-appliance", appliance or "")
    expect(details).to_have_attribute("data-start", start or "")


def test_ask_schedules_all_flexible_loads(dashboard: Page) -> None:
    """A typed request: the offline planner's iterations stream in, then its summary and one plan per appliance."""
    element = card(dashboard, "ask")
    element.locator("#ask-input").fill(ASK_REQUEST)
    element.locator("#ask-submit").click()
    expect(element.locator(".summary")).to_be_visible()
    expect(element.locator(".summary")).to_have_attribute("data-success", "true")
    expect(element.locator(".iteration").first).to_be_attached()
    expect(element.locator(".result-plan")).to_have_count(len(APPLIANCES))
    names = element.locator(".result-plan").evaluate_all("els => els.map(e => e.dataset.appliance)")
    assert sorted(names) == sorted(APPLIANCES)
    expect(element.locator(".error")).to_have_count(0)
    # The runs card hears the run end (subscribe_run) and counts it without a reload.
    expect(card(dashboard, "runs").locator('.stat[data-stat="runs"] .stat-value')).to_have_text("2")


def test_confirm_the_pending_garage_door(dashboard: Page, demo: Demo) -> None:
    """Confirm on the pending garage-door command executes it: its decision's outcome becomes ``executed``, the
    pending row goes, and the door opens."""
    trace_id = demo.garage_trace_id
    element = card(dashboard, "trace")
    element.locator(f'.pending[data-trace-id="{trace_id}"] button.confirm').click()
    expect(element.locator(f'.decision[data-trace-id="{trace_id}"]')).to_have_attribute("data-outcome", "executed")
    expect(element.locator(f'.pending[data-trace-id="{trace_id}"]')).to_have_count(0)
    dashboard.wait_for_function(f"() => {HASS}.states['cover.garage_door'].state === 'open'")
    expect(element.locator(".error")).to_have_count(0)


def test_the_trace_card_follows_an_entry_reload(dashboard: Page) -> None:
    """Options changes reload the entry: the card subscribes again by itself and shows the next decision live."""
    entry_id = dashboard.evaluate(f"async () => (await {HASS}.callWS({{type: 'agentic_hems/schedule'}})).entry_id")
    dashboard.evaluate(f"() => {HASS}.callApi('POST', 'config/config_entries/entry/{entry_id}/reload')")
    dashboard.wait_for_timeout(3000)  # the card waits 2 s before it subscribes again
    response = dashboard.evaluate(
        f"""async () => (await {HASS}.callService('agentic_hems', 'evaluate_command', {{source_agent: 'browser',
            model_candidate: {{intent: 'turn_on', device_alias: 'input_boolean.dishwasher'}}, dry_run: true}},
            undefined, false, true)).response"""
    )
    element = card(dashboard, "trace")
    expect(element.locator(f'.decision[data-trace-id="{response["trace_id"]}"]')).to_have_attribute(
        "data-outcome", response["outcome"])
    expect(element.locator(".error")).to_have_count(0)


@pytest.mark.parametrize("name", CARDS)
def test_screenshot(dashboard: Page, artifacts: Path, name: str) -> None:
    """An element screenshot of each card (after the ask and the confirmation) in tests/browser/artifacts/."""
    element = card(dashboard, name)
    expect(element).to_be_visible()
    path = artifacts / f"{name}-card.png"
    element.screenshot(path=str(path), animations="disabled")
    assert path.stat().st_size > 1000


def test_screenshot_dashboard(dashboard: Page, artifacts: Path) -> None:
    dashboard.screenshot(path=str(artifacts / "dashboard.png"), full_page=True)


def test_a_reload_shows_the_new_state(dashboard: Page, demo: Demo) -> None:
    """After a reload the cards load what HA stored: two runs (the demo's and this page's ask), the garage door's
    decision executed and nothing pending."""
    runs = dashboard.evaluate(f"() => {HASS}.callWS({{type: 'agentic_hems/runs'}})")
    assert len(runs["runs"]) == 2 and {r["model"] for r in runs["runs"]} == {"offline"}, runs
    dashboard.reload()
    runs_card = card(dashboard, "runs")
    expect(runs_card.locator('.stat[data-stat="runs"] .stat-value')).to_have_text("2")
    expect(runs_card.locator('.model-row[data-model="offline"]')).to_have_count(1)
    trace = card(dashboard, "trace")
    expect(trace.locator(f'.decision[data-trace-id="{demo.garage_trace_id}"]')).to_have_attribute(
        "data-outcome", "executed")
    expect(trace.locator(".pending")).to_have_count(0)
    for name in CARDS:
        expect(card(dashboard, name).locator(".error")).to_have_count(0)


def test_no_console_errors(dashboard: Page) -> None:
    """Nothing above logged an error in the page's console or threw: neither the cards nor HA's frontend around them
    (a failed websocket command or resource load shows up here too)."""
    assert console_errors(CONSOLE) == [], "\n".join(CONSOLE)
